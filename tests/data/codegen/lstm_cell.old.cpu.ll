// fusion_group_0
; ModuleID = 'fusion_group_0'
source_filename = "fusion_group_0"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; Function Attrs: alwaysinline
define internal void @fusion_group_0_body(ptr noalias %0, ptr noalias %1, ptr noalias %2, ptr noalias %3, ptr noalias %4, ptr noalias %5, ptr noalias %6, ptr noalias %7, ptr noalias %8, ptr noalias %9, ptr noalias %10, ptr noalias %11, i64 %12, i64 %13) #0 {
entry:
  %14 = icmp slt i64 %12, %13
  br i1 %14, label %row, label %exit

row:                                              ; preds = %row.next, %entry
  %row1 = phi i64 [ %12, %entry ], [ %335, %row.next ]
  %15 = mul i64 %row1, 16
  %16 = add i64 0, %15
  %17 = mul i64 %row1, 16
  %18 = add i64 4, %17
  %19 = mul i64 %row1, 16
  %20 = add i64 8, %19
  %21 = mul i64 %row1, 16
  %22 = add i64 12, %21
  %23 = mul i64 %row1, 16
  %24 = add i64 0, %23
  %25 = mul i64 %row1, 16
  %26 = add i64 4, %25
  %27 = mul i64 %row1, 16
  %28 = add i64 8, %27
  %29 = mul i64 %row1, 16
  %30 = add i64 12, %29
  %31 = mul i64 %row1, 4
  %32 = add i64 0, %31
  %33 = mul i64 %row1, 4
  br label %col

col:                                              ; preds = %col, %row
  %col2 = phi i64 [ 0, %row ], [ %333, %col ]
  %34 = mul i64 %col2, 1
  %35 = add i64 %16, %34
  %36 = getelementptr float, ptr %0, i64 %35
  %37 = load float, ptr %36, align 4
  %38 = mul i64 %col2, 1
  %39 = add i64 %18, %38
  %40 = getelementptr float, ptr %0, i64 %39
  %41 = load float, ptr %40, align 4
  %42 = mul i64 %col2, 1
  %43 = add i64 %20, %42
  %44 = getelementptr float, ptr %0, i64 %43
  %45 = load float, ptr %44, align 4
  %46 = mul i64 %col2, 1
  %47 = add i64 %22, %46
  %48 = getelementptr float, ptr %0, i64 %47
  %49 = load float, ptr %48, align 4
  %50 = mul i64 %col2, 1
  %51 = add i64 %24, %50
  %52 = getelementptr float, ptr %1, i64 %51
  %53 = load float, ptr %52, align 4
  %54 = mul i64 %col2, 1
  %55 = add i64 %26, %54
  %56 = getelementptr float, ptr %1, i64 %55
  %57 = load float, ptr %56, align 4
  %58 = mul i64 %col2, 1
  %59 = add i64 %28, %58
  %60 = getelementptr float, ptr %1, i64 %59
  %61 = load float, ptr %60, align 4
  %62 = mul i64 %col2, 1
  %63 = add i64 %30, %62
  %64 = getelementptr float, ptr %1, i64 %63
  %65 = load float, ptr %64, align 4
  %66 = fadd float %37, %53
  %67 = mul i64 %col2, 1
  %68 = add i64 0, %67
  %69 = getelementptr float, ptr %2, i64 %68
  %70 = load float, ptr %69, align 4
  %71 = mul i64 %col2, 1
  %72 = add i64 4, %71
  %73 = getelementptr float, ptr %2, i64 %72
  %74 = load float, ptr %73, align 4
  %75 = mul i64 %col2, 1
  %76 = add i64 8, %75
  %77 = getelementptr float, ptr %2, i64 %76
  %78 = load float, ptr %77, align 4
  %79 = mul i64 %col2, 1
  %80 = add i64 12, %79
  %81 = getelementptr float, ptr %2, i64 %80
  %82 = load float, ptr %81, align 4
  %83 = fadd float %66, %70
  %84 = mul i64 %col2, 1
  %85 = add i64 0, %84
  %86 = getelementptr float, ptr %3, i64 %85
  %87 = load float, ptr %86, align 4
  %88 = mul i64 %col2, 1
  %89 = add i64 4, %88
  %90 = getelementptr float, ptr %3, i64 %89
  %91 = load float, ptr %90, align 4
  %92 = mul i64 %col2, 1
  %93 = add i64 8, %92
  %94 = getelementptr float, ptr %3, i64 %93
  %95 = load float, ptr %94, align 4
  %96 = mul i64 %col2, 1
  %97 = add i64 12, %96
  %98 = getelementptr float, ptr %3, i64 %97
  %99 = load float, ptr %98, align 4
  %100 = fadd float %83, %87
  %101 = fneg float %100
  %102 = fcmp ogt float %101, 0x40561814A0000000
  %103 = select i1 %102, float 0x40561814A0000000, float %101
  %104 = fcmp olt float %103, 0xC055D58A00000000
  %105 = select i1 %104, float 0xC055D58A00000000, float %103
  %106 = fmul float %105, 0x3FF7154760000000
  %107 = fadd float %106, 5.000000e-01
  %108 = call float @llvm.floor.f32(float %107)
  %109 = fmul float %108, 0x3FE6300000000000
  %110 = fsub float %105, %109
  %111 = fmul float %108, 0xBF2BD01060000000
  %112 = fsub float %110, %111
  %113 = fmul float 0x3F2A0D2CE0000000, %112
  %114 = fadd float %113, 0x3F56E879C0000000
  %115 = fmul float %114, %112
  %116 = fadd float %115, 0x3F81112100000000
  %117 = fmul float %116, %112
  %118 = fadd float %117, 0x3FA5553820000000
  %119 = fmul float %118, %112
  %120 = fadd float %119, 0x3FC5555540000000
  %121 = fmul float %120, %112
  %122 = fadd float %121, 5.000000e-01
  %123 = fmul float %112, %112
  %124 = fmul float %122, %123
  %125 = fadd float %124, %112
  %126 = fadd float %125, 1.000000e+00
  %127 = fptosi float %108 to i32
  %128 = add i32 %127, 127
  %129 = shl i32 %128, 23
  %130 = bitcast i32 %129 to float
  %131 = fmul float %126, %130
  %132 = fcmp ogt float %101, 0x40562E4300000000
  %133 = select i1 %132, float 0x7FF0000000000000, float %131
  %134 = fcmp olt float %101, 0xC055D58A00000000
  %135 = select i1 %134, float 0.000000e+00, float %133
  %136 = fcmp uno float %101, %101
  %137 = select i1 %136, float %101, float %135
  %138 = fadd float 1.000000e+00, %137
  %139 = fdiv float 1.000000e+00, %138
  %140 = fadd float %41, %57
  %141 = fadd float %140, %74
  %142 = fadd float %141, %91
  %143 = fneg float %142
  %144 = fcmp ogt float %143, 0x40561814A0000000
  %145 = select i1 %144, float 0x40561814A0000000, float %143
  %146 = fcmp olt float %145, 0xC055D58A00000000
  %147 = select i1 %146, float 0xC055D58A00000000, float %145
  %148 = fmul float %147, 0x3FF7154760000000
  %149 = fadd float %148, 5.000000e-01
  %150 = call float @llvm.floor.f32(float %149)
  %151 = fmul float %150, 0x3FE6300000000000
  %152 = fsub float %147, %151
  %153 = fmul float %150, 0xBF2BD01060000000
  %154 = fsub float %152, %153
  %155 = fmul float 0x3F2A0D2CE0000000, %154
  %156 = fadd float %155, 0x3F56E879C0000000
  %157 = fmul float %156, %154
  %158 = fadd float %157, 0x3F81112100000000
  %159 = fmul float %158, %154
  %160 = fadd float %159, 0x3FA5553820000000
  %161 = fmul float %160, %154
  %162 = fadd float %161, 0x3FC5555540000000
  %163 = fmul float %162, %154
  %164 = fadd float %163, 5.000000e-01
  %165 = fmul float %154, %154
  %166 = fmul float %164, %165
  %167 = fadd float %166, %154
  %168 = fadd float %167, 1.000000e+00
  %169 = fptosi float %150 to i32
  %170 = add i32 %169, 127
  %171 = shl i32 %170, 23
  %172 = bitcast i32 %171 to float
  %173 = fmul float %168, %172
  %174 = fcmp ogt float %143, 0x40562E4300000000
  %175 = select i1 %174, float 0x7FF0000000000000, float %173
  %176 = fcmp olt float %143, 0xC055D58A00000000
  %177 = select i1 %176, float 0.000000e+00, float %175
  %178 = fcmp uno float %143, %143
  %179 = select i1 %178, float %143, float %177
  %180 = fadd float 1.000000e+00, %179
  %181 = fdiv float 1.000000e+00, %180
  %182 = fadd float %45, %61
  %183 = fadd float %182, %78
  %184 = fadd float %183, %95
  %185 = call float @llvm.fabs.f32(float %184)
  %186 = fmul float %185, -2.000000e+00
  %187 = fcmp ogt float %186, 0x40561814A0000000
  %188 = select i1 %187, float 0x40561814A0000000, float %186
  %189 = fcmp olt float %188, 0xC055D58A00000000
  %190 = select i1 %189, float 0xC055D58A00000000, float %188
  %191 = fmul float %190, 0x3FF7154760000000
  %192 = fadd float %191, 5.000000e-01
  %193 = call float @llvm.floor.f32(float %192)
  %194 = fmul float %193, 0x3FE6300000000000
  %195 = fsub float %190, %194
  %196 = fmul float %193, 0xBF2BD01060000000
  %197 = fsub float %195, %196
  %198 = fmul float 0x3F2A0D2CE0000000, %197
  %199 = fadd float %198, 0x3F56E879C0000000
  %200 = fmul float %199, %197
  %201 = fadd float %200, 0x3F81112100000000
  %202 = fmul float %201, %197
  %203 = fadd float %202, 0x3FA5553820000000
  %204 = fmul float %203, %197
  %205 = fadd float %204, 0x3FC5555540000000
  %206 = fmul float %205, %197
  %207 = fadd float %206, 5.000000e-01
  %208 = fmul float %197, %197
  %209 = fmul float %207, %208
  %210 = fadd float %209, %197
  %211 = fadd float %210, 1.000000e+00
  %212 = fptosi float %193 to i32
  %213 = add i32 %212, 127
  %214 = shl i32 %213, 23
  %215 = bitcast i32 %214 to float
  %216 = fmul float %211, %215
  %217 = fcmp ogt float %186, 0x40562E4300000000
  %218 = select i1 %217, float 0x7FF0000000000000, float %216
  %219 = fcmp olt float %186, 0xC055D58A00000000
  %220 = select i1 %219, float 0.000000e+00, float %218
  %221 = fcmp uno float %186, %186
  %222 = select i1 %221, float %186, float %220
  %223 = fadd float 1.000000e+00, %222
  %224 = fsub float 1.000000e+00, %222
  %225 = fdiv float %224, %223
  %226 = call float @llvm.copysign.f32(float %225, float %184)
  %227 = fadd float %49, %65
  %228 = fadd float %227, %82
  %229 = fadd float %228, %99
  %230 = fneg float %229
  %231 = fcmp ogt float %230, 0x40561814A0000000
  %232 = select i1 %231, float 0x40561814A0000000, float %230
  %233 = fcmp olt float %232, 0xC055D58A00000000
  %234 = select i1 %233, float 0xC055D58A00000000, float %232
  %235 = fmul float %234, 0x3FF7154760000000
  %236 = fadd float %235, 5.000000e-01
  %237 = call float @llvm.floor.f32(float %236)
  %238 = fmul float %237, 0x3FE6300000000000
  %239 = fsub float %234, %238
  %240 = fmul float %237, 0xBF2BD01060000000
  %241 = fsub float %239, %240
  %242 = fmul float 0x3F2A0D2CE0000000, %241
  %243 = fadd float %242, 0x3F56E879C0000000
  %244 = fmul float %243, %241
  %245 = fadd float %244, 0x3F81112100000000
  %246 = fmul float %245, %241
  %247 = fadd float %246, 0x3FA5553820000000
  %248 = fmul float %247, %241
  %249 = fadd float %248, 0x3FC5555540000000
  %250 = fmul float %249, %241
  %251 = fadd float %250, 5.000000e-01
  %252 = fmul float %241, %241
  %253 = fmul float %251, %252
  %254 = fadd float %253, %241
  %255 = fadd float %254, 1.000000e+00
  %256 = fptosi float %237 to i32
  %257 = add i32 %256, 127
  %258 = shl i32 %257, 23
  %259 = bitcast i32 %258 to float
  %260 = fmul float %255, %259
  %261 = fcmp ogt float %230, 0x40562E4300000000
  %262 = select i1 %261, float 0x7FF0000000000000, float %260
  %263 = fcmp olt float %230, 0xC055D58A00000000
  %264 = select i1 %263, float 0.000000e+00, float %262
  %265 = fcmp uno float %230, %230
  %266 = select i1 %265, float %230, float %264
  %267 = fadd float 1.000000e+00, %266
  %268 = fdiv float 1.000000e+00, %267
  %269 = mul i64 %col2, 1
  %270 = add i64 %32, %269
  %271 = getelementptr float, ptr %4, i64 %270
  %272 = load float, ptr %271, align 4
  %273 = fmul float %181, %272
  %274 = fmul float %139, %226
  %275 = fadd float %273, %274
  %276 = call float @llvm.fabs.f32(float %275)
  %277 = fmul float %276, -2.000000e+00
  %278 = fcmp ogt float %277, 0x40561814A0000000
  %279 = select i1 %278, float 0x40561814A0000000, float %277
  %280 = fcmp olt float %279, 0xC055D58A00000000
  %281 = select i1 %280, float 0xC055D58A00000000, float %279
  %282 = fmul float %281, 0x3FF7154760000000
  %283 = fadd float %282, 5.000000e-01
  %284 = call float @llvm.floor.f32(float %283)
  %285 = fmul float %284, 0x3FE6300000000000
  %286 = fsub float %281, %285
  %287 = fmul float %284, 0xBF2BD01060000000
  %288 = fsub float %286, %287
  %289 = fmul float 0x3F2A0D2CE0000000, %288
  %290 = fadd float %289, 0x3F56E879C0000000
  %291 = fmul float %290, %288
  %292 = fadd float %291, 0x3F81112100000000
  %293 = fmul float %292, %288
  %294 = fadd float %293, 0x3FA5553820000000
  %295 = fmul float %294, %288
  %296 = fadd float %295, 0x3FC5555540000000
  %297 = fmul float %296, %288
  %298 = fadd float %297, 5.000000e-01
  %299 = fmul float %288, %288
  %300 = fmul float %298, %299
  %301 = fadd float %300, %288
  %302 = fadd float %301, 1.000000e+00
  %303 = fptosi float %284 to i32
  %304 = add i32 %303, 127
  %305 = shl i32 %304, 23
  %306 = bitcast i32 %305 to float
  %307 = fmul float %302, %306
  %308 = fcmp ogt float %277, 0x40562E4300000000
  %309 = select i1 %308, float 0x7FF0000000000000, float %307
  %310 = fcmp olt float %277, 0xC055D58A00000000
  %311 = select i1 %310, float 0.000000e+00, float %309
  %312 = fcmp uno float %277, %277
  %313 = select i1 %312, float %277, float %311
  %314 = fadd float 1.000000e+00, %313
  %315 = fsub float 1.000000e+00, %313
  %316 = fdiv float %315, %314
  %317 = call float @llvm.copysign.f32(float %316, float %275)
  %318 = fmul float %268, %317
  %319 = add i64 %33, %col2
  %320 = getelementptr float, ptr %5, i64 %319
  store float %139, ptr %320, align 4
  %321 = add i64 %33, %col2
  %322 = getelementptr float, ptr %6, i64 %321
  store float %181, ptr %322, align 4
  %323 = add i64 %33, %col2
  %324 = getelementptr float, ptr %7, i64 %323
  store float %226, ptr %324, align 4
  %325 = add i64 %33, %col2
  %326 = getelementptr float, ptr %8, i64 %325
  store float %268, ptr %326, align 4
  %327 = add i64 %33, %col2
  %328 = getelementptr float, ptr %9, i64 %327
  store float %275, ptr %328, align 4
  %329 = add i64 %33, %col2
  %330 = getelementptr float, ptr %10, i64 %329
  store float %317, ptr %330, align 4
  %331 = add i64 %33, %col2
  %332 = getelementptr float, ptr %11, i64 %331
  store float %318, ptr %332, align 4
  %333 = add i64 %col2, 1
  %334 = icmp slt i64 %333, 4
  br i1 %334, label %col, label %row.next

row.next:                                         ; preds = %col
  %335 = add i64 %row1, 1
  %336 = icmp slt i64 %335, %13
  br i1 %336, label %row, label %exit

exit:                                             ; preds = %row.next, %entry
  ret void
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.floor.f32(float) #1

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.fabs.f32(float) #1

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.copysign.f32(float, float) #1

define void @fusion_group_0(ptr %0, i64 %1, i64 %2) {
entry:
  %3 = getelementptr ptr, ptr %0, i64 0
  %4 = load ptr, ptr %3, align 8
  %5 = getelementptr ptr, ptr %0, i64 1
  %6 = load ptr, ptr %5, align 8
  %7 = getelementptr ptr, ptr %0, i64 2
  %8 = load ptr, ptr %7, align 8
  %9 = getelementptr ptr, ptr %0, i64 3
  %10 = load ptr, ptr %9, align 8
  %11 = getelementptr ptr, ptr %0, i64 4
  %12 = load ptr, ptr %11, align 8
  %13 = getelementptr ptr, ptr %0, i64 5
  %14 = load ptr, ptr %13, align 8
  %15 = getelementptr ptr, ptr %0, i64 6
  %16 = load ptr, ptr %15, align 8
  %17 = getelementptr ptr, ptr %0, i64 7
  %18 = load ptr, ptr %17, align 8
  %19 = getelementptr ptr, ptr %0, i64 8
  %20 = load ptr, ptr %19, align 8
  %21 = getelementptr ptr, ptr %0, i64 9
  %22 = load ptr, ptr %21, align 8
  %23 = getelementptr ptr, ptr %0, i64 10
  %24 = load ptr, ptr %23, align 8
  %25 = getelementptr ptr, ptr %0, i64 11
  %26 = load ptr, ptr %25, align 8
  call void @fusion_group_0_body(ptr %4, ptr %6, ptr %8, ptr %10, ptr %12, ptr %14, ptr %16, ptr %18, ptr %20, ptr %22, ptr %24, ptr %26, i64 %1, i64 %2)
  ret void
}

attributes #0 = { alwaysinline }
attributes #1 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }

// fusion_group_1
; ModuleID = 'fusion_group_1'
source_filename = "fusion_group_1"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; Function Attrs: alwaysinline
define internal void @fusion_group_1_body(ptr noalias %0, ptr noalias %1, ptr noalias %2, ptr noalias %3, ptr noalias %4, ptr noalias %5, ptr noalias %6, ptr noalias %7, ptr noalias %8, ptr noalias %9, ptr noalias %10, ptr noalias %11, ptr noalias %12, i64 %13, i64 %14) #0 {
entry:
  %15 = icmp slt i64 %13, %14
  br i1 %15, label %row, label %exit

row:                                              ; preds = %row.next, %entry
  %row1 = phi i64 [ %13, %entry ], [ %99, %row.next ]
  %16 = mul i64 %row1, 4
  %17 = add i64 0, %16
  %18 = mul i64 %row1, 4
  %19 = add i64 0, %18
  %20 = mul i64 %row1, 4
  %21 = add i64 0, %20
  %22 = mul i64 %row1, 4
  %23 = add i64 0, %22
  %24 = mul i64 %row1, 4
  %25 = add i64 0, %24
  %26 = mul i64 %row1, 4
  %27 = add i64 0, %26
  %28 = mul i64 %row1, 4
  %29 = add i64 0, %28
  %30 = mul i64 %row1, 4
  %31 = add i64 0, %30
  %32 = mul i64 %row1, 4
  br label %col

col:                                              ; preds = %col, %row
  %col2 = phi i64 [ 0, %row ], [ %97, %col ]
  %33 = mul i64 %col2, 1
  %34 = add i64 %17, %33
  %35 = getelementptr float, ptr %1, i64 %34
  %36 = load float, ptr %35, align 4
  %37 = mul i64 %col2, 1
  %38 = add i64 %19, %37
  %39 = getelementptr float, ptr %2, i64 %38
  %40 = load float, ptr %39, align 4
  %41 = fmul float %36, %40
  %42 = mul i64 %col2, 1
  %43 = add i64 %21, %42
  %44 = getelementptr float, ptr %3, i64 %43
  %45 = load float, ptr %44, align 4
  %46 = fmul float %45, %45
  %47 = fsub float 1.000000e+00, %46
  %48 = fmul float %41, %47
  %49 = mul i64 %col2, 1
  %50 = add i64 %23, %49
  %51 = getelementptr float, ptr %0, i64 %50
  %52 = load float, ptr %51, align 4
  %53 = fadd float %52, %48
  %54 = mul i64 %col2, 1
  %55 = add i64 %25, %54
  %56 = getelementptr float, ptr %4, i64 %55
  %57 = load float, ptr %56, align 4
  %58 = fmul float %53, %57
  %59 = fmul float %36, %45
  %60 = fsub float 1.000000e+00, %40
  %61 = fmul float %59, %40
  %62 = fmul float %61, %60
  %63 = mul i64 %col2, 1
  %64 = add i64 %27, %63
  %65 = getelementptr float, ptr %5, i64 %64
  %66 = load float, ptr %65, align 4
  %67 = fmul float %53, %66
  %68 = mul i64 %col2, 1
  %69 = add i64 %29, %68
  %70 = getelementptr float, ptr %6, i64 %69
  %71 = load float, ptr %70, align 4
  %72 = fmul float %71, %71
  %73 = fsub float 1.000000e+00, %72
  %74 = fmul float %67, %73
  %75 = mul i64 %col2, 1
  %76 = add i64 %31, %75
  %77 = getelementptr float, ptr %7, i64 %76
  %78 = load float, ptr %77, align 4
  %79 = fmul float %53, %78
  %80 = fsub float 1.000000e+00, %57
  %81 = fmul float %79, %57
  %82 = fmul float %81, %80
  %83 = fmul float %53, %71
  %84 = fsub float 1.000000e+00, %66
  %85 = fmul float %83, %66
  %86 = fmul float %85, %84
  %87 = add i64 %32, %col2
  %88 = getelementptr float, ptr %8, i64 %87
  store float %58, ptr %88, align 4
  %89 = add i64 %32, %col2
  %90 = getelementptr float, ptr %9, i64 %89
  store float %62, ptr %90, align 4
  %91 = add i64 %32, %col2
  %92 = getelementptr float, ptr %10, i64 %91
  store float %74, ptr %92, align 4
  %93 = add i64 %32, %col2
  %94 = getelementptr float, ptr %11, i64 %93
  store float %82, ptr %94, align 4
  %95 = add i64 %32, %col2
  %96 = getelementptr float, ptr %12, i64 %95
  store float %86, ptr %96, align 4
  %97 = add i64 %col2, 1
  %98 = icmp slt i64 %97, 4
  br i1 %98, label %col, label %row.next

row.next:                                         ; preds = %col
  %99 = add i64 %row1, 1
  %100 = icmp slt i64 %99, %14
  br i1 %100, label %row, label %exit

exit:                                             ; preds = %row.next, %entry
  ret void
}

define void @fusion_group_1(ptr %0, i64 %1, i64 %2) {
entry:
  %3 = getelementptr ptr, ptr %0, i64 0
  %4 = load ptr, ptr %3, align 8
  %5 = getelementptr ptr, ptr %0, i64 1
  %6 = load ptr, ptr %5, align 8
  %7 = getelementptr ptr, ptr %0, i64 2
  %8 = load ptr, ptr %7, align 8
  %9 = getelementptr ptr, ptr %0, i64 3
  %10 = load ptr, ptr %9, align 8
  %11 = getelementptr ptr, ptr %0, i64 4
  %12 = load ptr, ptr %11, align 8
  %13 = getelementptr ptr, ptr %0, i64 5
  %14 = load ptr, ptr %13, align 8
  %15 = getelementptr ptr, ptr %0, i64 6
  %16 = load ptr, ptr %15, align 8
  %17 = getelementptr ptr, ptr %0, i64 7
  %18 = load ptr, ptr %17, align 8
  %19 = getelementptr ptr, ptr %0, i64 8
  %20 = load ptr, ptr %19, align 8
  %21 = getelementptr ptr, ptr %0, i64 9
  %22 = load ptr, ptr %21, align 8
  %23 = getelementptr ptr, ptr %0, i64 10
  %24 = load ptr, ptr %23, align 8
  %25 = getelementptr ptr, ptr %0, i64 11
  %26 = load ptr, ptr %25, align 8
  %27 = getelementptr ptr, ptr %0, i64 12
  %28 = load ptr, ptr %27, align 8
  call void @fusion_group_1_body(ptr %4, ptr %6, ptr %8, ptr %10, ptr %12, ptr %14, ptr %16, ptr %18, ptr %20, ptr %22, ptr %24, ptr %26, ptr %28, i64 %1, i64 %2)
  ret void
}

attributes #0 = { alwaysinline }

