// fusion_group_0
/* loop nest: as scheduled for the CPU
for (int64_t i0 = 0; i0 < 2; i0++) {
  for (int64_t i1 = 0; i1 < 4; i1++) { // vectorize
    out0[i0, i1] = sigmoid((((in0[i0, i1] + in1[i0, i1]) + in2[i1]) + in3[i1]));
    out1[i0, i1] = sigmoid((((in0[i0, (i1 + 4)] + in1[i0, (i1 + 4)]) + in2[(i1 + 4)]) + in3[(i1 + 4)]));
    out2[i0, i1] = tanh((((in0[i0, (i1 + 8)] + in1[i0, (i1 + 8)]) + in2[(i1 + 8)]) + in3[(i1 + 8)]));
    out3[i0, i1] = sigmoid((((in0[i0, (i1 + 12)] + in1[i0, (i1 + 12)]) + in2[(i1 + 12)]) + in3[(i1 + 12)]));
    out4[i0, i1] = ((sigmoid((((in0[i0, (i1 + 4)] + in1[i0, (i1 + 4)]) + in2[(i1 + 4)]) + in3[(i1 + 4)])) * in4[i0, i1]) + (sigmoid((((in0[i0, i1] + in1[i0, i1]) + in2[i1]) + in3[i1])) * tanh((((in0[i0, (i1 + 8)] + in1[i0, (i1 + 8)]) + in2[(i1 + 8)]) + in3[(i1 + 8)]))));
    out5[i0, i1] = tanh(((sigmoid((((in0[i0, (i1 + 4)] + in1[i0, (i1 + 4)]) + in2[(i1 + 4)]) + in3[(i1 + 4)])) * in4[i0, i1]) + (sigmoid((((in0[i0, i1] + in1[i0, i1]) + in2[i1]) + in3[i1])) * tanh((((in0[i0, (i1 + 8)] + in1[i0, (i1 + 8)]) + in2[(i1 + 8)]) + in3[(i1 + 8)])))));
    out6[i0, i1] = (sigmoid((((in0[i0, (i1 + 12)] + in1[i0, (i1 + 12)]) + in2[(i1 + 12)]) + in3[(i1 + 12)])) * tanh(((sigmoid((((in0[i0, (i1 + 4)] + in1[i0, (i1 + 4)]) + in2[(i1 + 4)]) + in3[(i1 + 4)])) * in4[i0, i1]) + (sigmoid((((in0[i0, i1] + in1[i0, i1]) + in2[i1]) + in3[i1])) * tanh((((in0[i0, (i1 + 8)] + in1[i0, (i1 + 8)]) + in2[(i1 + 8)]) + in3[(i1 + 8)]))))));
  }
}
*/
; ModuleID = 'fusion_group_0'
source_filename = "fusion_group_0"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; Function Attrs: alwaysinline
define internal void @fusion_group_0_0_body(ptr noalias %0, ptr noalias %1, ptr noalias %2, ptr noalias %3, ptr noalias %4, ptr noalias %5, ptr noalias %6, ptr noalias %7, ptr noalias %8, ptr noalias %9, ptr noalias %10, ptr noalias %11, i64 %12, i64 %13) #0 {
entry:
  br label %loop

loop:                                             ; preds = %exit3, %entry
  %i0 = phi i64 [ %12, %entry ], [ %343, %exit3 ]
  %14 = icmp slt i64 %i0, %13
  br i1 %14, label %body, label %exit

body:                                             ; preds = %loop
  br label %loop1

exit:                                             ; preds = %loop
  ret void

loop1:                                            ; preds = %body2, %body
  %i1 = phi i64 [ 0, %body ], [ %342, %body2 ]
  %15 = icmp slt i64 %i1, 4
  br i1 %15, label %body2, label %exit3

body2:                                            ; preds = %loop1
  %16 = add i64 0, %i0
  %17 = mul i64 %16, 4
  %18 = add i64 %17, %i1
  %19 = getelementptr float, ptr %5, i64 %18
  %20 = add i64 0, %i0
  %21 = mul i64 %20, 16
  %22 = add i64 %21, %i1
  %23 = getelementptr float, ptr %0, i64 %22
  %24 = load float, ptr %23, align 4
  %25 = add i64 0, %i0
  %26 = mul i64 %25, 16
  %27 = add i64 %26, %i1
  %28 = getelementptr float, ptr %1, i64 %27
  %29 = load float, ptr %28, align 4
  %30 = fadd float %24, %29
  %31 = add i64 0, %i1
  %32 = getelementptr float, ptr %2, i64 %31
  %33 = load float, ptr %32, align 4
  %34 = fadd float %30, %33
  %35 = add i64 0, %i1
  %36 = getelementptr float, ptr %3, i64 %35
  %37 = load float, ptr %36, align 4
  %38 = fadd float %34, %37
  %39 = fneg float %38
  %40 = fcmp ogt float %39, 0x40561814A0000000
  %41 = select i1 %40, float 0x40561814A0000000, float %39
  %42 = fcmp olt float %41, 0xC055D58A00000000
  %43 = select i1 %42, float 0xC055D58A00000000, float %41
  %44 = fmul float %43, 0x3FF7154760000000
  %45 = fadd float %44, 5.000000e-01
  %46 = call float @llvm.floor.f32(float %45)
  %47 = fmul float %46, 0x3FE6300000000000
  %48 = fsub float %43, %47
  %49 = fmul float %46, 0xBF2BD01060000000
  %50 = fsub float %48, %49
  %51 = fmul float 0x3F2A0D2CE0000000, %50
  %52 = fadd float %51, 0x3F56E879C0000000
  %53 = fmul float %52, %50
  %54 = fadd float %53, 0x3F81112100000000
  %55 = fmul float %54, %50
  %56 = fadd float %55, 0x3FA5553820000000
  %57 = fmul float %56, %50
  %58 = fadd float %57, 0x3FC5555540000000
  %59 = fmul float %58, %50
  %60 = fadd float %59, 5.000000e-01
  %61 = fmul float %50, %50
  %62 = fmul float %60, %61
  %63 = fadd float %62, %50
  %64 = fadd float %63, 1.000000e+00
  %65 = fptosi float %46 to i32
  %66 = add i32 %65, 127
  %67 = shl i32 %66, 23
  %68 = bitcast i32 %67 to float
  %69 = fmul float %64, %68
  %70 = fcmp ogt float %39, 0x40562E4300000000
  %71 = select i1 %70, float 0x7FF0000000000000, float %69
  %72 = fcmp olt float %39, 0xC055D58A00000000
  %73 = select i1 %72, float 0.000000e+00, float %71
  %74 = fcmp uno float %39, %39
  %75 = select i1 %74, float %39, float %73
  %76 = fadd float 1.000000e+00, %75
  %77 = fdiv float 1.000000e+00, %76
  store float %77, ptr %19, align 4
  %78 = add i64 0, %i0
  %79 = mul i64 %78, 4
  %80 = add i64 %79, %i1
  %81 = getelementptr float, ptr %6, i64 %80
  %82 = add i64 0, %i0
  %83 = add i64 %i1, 4
  %84 = mul i64 %82, 16
  %85 = add i64 %84, %83
  %86 = getelementptr float, ptr %0, i64 %85
  %87 = load float, ptr %86, align 4
  %88 = add i64 0, %i0
  %89 = add i64 %i1, 4
  %90 = mul i64 %88, 16
  %91 = add i64 %90, %89
  %92 = getelementptr float, ptr %1, i64 %91
  %93 = load float, ptr %92, align 4
  %94 = fadd float %87, %93
  %95 = add i64 %i1, 4
  %96 = add i64 0, %95
  %97 = getelementptr float, ptr %2, i64 %96
  %98 = load float, ptr %97, align 4
  %99 = fadd float %94, %98
  %100 = add i64 %i1, 4
  %101 = add i64 0, %100
  %102 = getelementptr float, ptr %3, i64 %101
  %103 = load float, ptr %102, align 4
  %104 = fadd float %99, %103
  %105 = fneg float %104
  %106 = fcmp ogt float %105, 0x40561814A0000000
  %107 = select i1 %106, float 0x40561814A0000000, float %105
  %108 = fcmp olt float %107, 0xC055D58A00000000
  %109 = select i1 %108, float 0xC055D58A00000000, float %107
  %110 = fmul float %109, 0x3FF7154760000000
  %111 = fadd float %110, 5.000000e-01
  %112 = call float @llvm.floor.f32(float %111)
  %113 = fmul float %112, 0x3FE6300000000000
  %114 = fsub float %109, %113
  %115 = fmul float %112, 0xBF2BD01060000000
  %116 = fsub float %114, %115
  %117 = fmul float 0x3F2A0D2CE0000000, %116
  %118 = fadd float %117, 0x3F56E879C0000000
  %119 = fmul float %118, %116
  %120 = fadd float %119, 0x3F81112100000000
  %121 = fmul float %120, %116
  %122 = fadd float %121, 0x3FA5553820000000
  %123 = fmul float %122, %116
  %124 = fadd float %123, 0x3FC5555540000000
  %125 = fmul float %124, %116
  %126 = fadd float %125, 5.000000e-01
  %127 = fmul float %116, %116
  %128 = fmul float %126, %127
  %129 = fadd float %128, %116
  %130 = fadd float %129, 1.000000e+00
  %131 = fptosi float %112 to i32
  %132 = add i32 %131, 127
  %133 = shl i32 %132, 23
  %134 = bitcast i32 %133 to float
  %135 = fmul float %130, %134
  %136 = fcmp ogt float %105, 0x40562E4300000000
  %137 = select i1 %136, float 0x7FF0000000000000, float %135
  %138 = fcmp olt float %105, 0xC055D58A00000000
  %139 = select i1 %138, float 0.000000e+00, float %137
  %140 = fcmp uno float %105, %105
  %141 = select i1 %140, float %105, float %139
  %142 = fadd float 1.000000e+00, %141
  %143 = fdiv float 1.000000e+00, %142
  store float %143, ptr %81, align 4
  %144 = add i64 0, %i0
  %145 = mul i64 %144, 4
  %146 = add i64 %145, %i1
  %147 = getelementptr float, ptr %7, i64 %146
  %148 = add i64 0, %i0
  %149 = add i64 %i1, 8
  %150 = mul i64 %148, 16
  %151 = add i64 %150, %149
  %152 = getelementptr float, ptr %0, i64 %151
  %153 = load float, ptr %152, align 4
  %154 = add i64 0, %i0
  %155 = add i64 %i1, 8
  %156 = mul i64 %154, 16
  %157 = add i64 %156, %155
  %158 = getelementptr float, ptr %1, i64 %157
  %159 = load float, ptr %158, align 4
  %160 = fadd float %153, %159
  %161 = add i64 %i1, 8
  %162 = add i64 0, %161
  %163 = getelementptr float, ptr %2, i64 %162
  %164 = load float, ptr %163, align 4
  %165 = fadd float %160, %164
  %166 = add i64 %i1, 8
  %167 = add i64 0, %166
  %168 = getelementptr float, ptr %3, i64 %167
  %169 = load float, ptr %168, align 4
  %170 = fadd float %165, %169
  %171 = call float @llvm.fabs.f32(float %170)
  %172 = fmul float %171, -2.000000e+00
  %173 = fcmp ogt float %172, 0x40561814A0000000
  %174 = select i1 %173, float 0x40561814A0000000, float %172
  %175 = fcmp olt float %174, 0xC055D58A00000000
  %176 = select i1 %175, float 0xC055D58A00000000, float %174
  %177 = fmul float %176, 0x3FF7154760000000
  %178 = fadd float %177, 5.000000e-01
  %179 = call float @llvm.floor.f32(float %178)
  %180 = fmul float %179, 0x3FE6300000000000
  %181 = fsub float %176, %180
  %182 = fmul float %179, 0xBF2BD01060000000
  %183 = fsub float %181, %182
  %184 = fmul float 0x3F2A0D2CE0000000, %183
  %185 = fadd float %184, 0x3F56E879C0000000
  %186 = fmul float %185, %183
  %187 = fadd float %186, 0x3F81112100000000
  %188 = fmul float %187, %183
  %189 = fadd float %188, 0x3FA5553820000000
  %190 = fmul float %189, %183
  %191 = fadd float %190, 0x3FC5555540000000
  %192 = fmul float %191, %183
  %193 = fadd float %192, 5.000000e-01
  %194 = fmul float %183, %183
  %195 = fmul float %193, %194
  %196 = fadd float %195, %183
  %197 = fadd float %196, 1.000000e+00
  %198 = fptosi float %179 to i32
  %199 = add i32 %198, 127
  %200 = shl i32 %199, 23
  %201 = bitcast i32 %200 to float
  %202 = fmul float %197, %201
  %203 = fcmp ogt float %172, 0x40562E4300000000
  %204 = select i1 %203, float 0x7FF0000000000000, float %202
  %205 = fcmp olt float %172, 0xC055D58A00000000
  %206 = select i1 %205, float 0.000000e+00, float %204
  %207 = fcmp uno float %172, %172
  %208 = select i1 %207, float %172, float %206
  %209 = fadd float 1.000000e+00, %208
  %210 = fsub float 1.000000e+00, %208
  %211 = fdiv float %210, %209
  %212 = call float @llvm.copysign.f32(float %211, float %170)
  store float %212, ptr %147, align 4
  %213 = add i64 0, %i0
  %214 = mul i64 %213, 4
  %215 = add i64 %214, %i1
  %216 = getelementptr float, ptr %8, i64 %215
  %217 = add i64 0, %i0
  %218 = add i64 %i1, 12
  %219 = mul i64 %217, 16
  %220 = add i64 %219, %218
  %221 = getelementptr float, ptr %0, i64 %220
  %222 = load float, ptr %221, align 4
  %223 = add i64 0, %i0
  %224 = add i64 %i1, 12
  %225 = mul i64 %223, 16
  %226 = add i64 %225, %224
  %227 = getelementptr float, ptr %1, i64 %226
  %228 = load float, ptr %227, align 4
  %229 = fadd float %222, %228
  %230 = add i64 %i1, 12
  %231 = add i64 0, %230
  %232 = getelementptr float, ptr %2, i64 %231
  %233 = load float, ptr %232, align 4
  %234 = fadd float %229, %233
  %235 = add i64 %i1, 12
  %236 = add i64 0, %235
  %237 = getelementptr float, ptr %3, i64 %236
  %238 = load float, ptr %237, align 4
  %239 = fadd float %234, %238
  %240 = fneg float %239
  %241 = fcmp ogt float %240, 0x40561814A0000000
  %242 = select i1 %241, float 0x40561814A0000000, float %240
  %243 = fcmp olt float %242, 0xC055D58A00000000
  %244 = select i1 %243, float 0xC055D58A00000000, float %242
  %245 = fmul float %244, 0x3FF7154760000000
  %246 = fadd float %245, 5.000000e-01
  %247 = call float @llvm.floor.f32(float %246)
  %248 = fmul float %247, 0x3FE6300000000000
  %249 = fsub float %244, %248
  %250 = fmul float %247, 0xBF2BD01060000000
  %251 = fsub float %249, %250
  %252 = fmul float 0x3F2A0D2CE0000000, %251
  %253 = fadd float %252, 0x3F56E879C0000000
  %254 = fmul float %253, %251
  %255 = fadd float %254, 0x3F81112100000000
  %256 = fmul float %255, %251
  %257 = fadd float %256, 0x3FA5553820000000
  %258 = fmul float %257, %251
  %259 = fadd float %258, 0x3FC5555540000000
  %260 = fmul float %259, %251
  %261 = fadd float %260, 5.000000e-01
  %262 = fmul float %251, %251
  %263 = fmul float %261, %262
  %264 = fadd float %263, %251
  %265 = fadd float %264, 1.000000e+00
  %266 = fptosi float %247 to i32
  %267 = add i32 %266, 127
  %268 = shl i32 %267, 23
  %269 = bitcast i32 %268 to float
  %270 = fmul float %265, %269
  %271 = fcmp ogt float %240, 0x40562E4300000000
  %272 = select i1 %271, float 0x7FF0000000000000, float %270
  %273 = fcmp olt float %240, 0xC055D58A00000000
  %274 = select i1 %273, float 0.000000e+00, float %272
  %275 = fcmp uno float %240, %240
  %276 = select i1 %275, float %240, float %274
  %277 = fadd float 1.000000e+00, %276
  %278 = fdiv float 1.000000e+00, %277
  store float %278, ptr %216, align 4
  %279 = add i64 0, %i0
  %280 = mul i64 %279, 4
  %281 = add i64 %280, %i1
  %282 = getelementptr float, ptr %9, i64 %281
  %283 = add i64 0, %i0
  %284 = mul i64 %283, 4
  %285 = add i64 %284, %i1
  %286 = getelementptr float, ptr %4, i64 %285
  %287 = load float, ptr %286, align 4
  %288 = fmul float %143, %287
  %289 = fmul float %77, %212
  %290 = fadd float %288, %289
  store float %290, ptr %282, align 4
  %291 = add i64 0, %i0
  %292 = mul i64 %291, 4
  %293 = add i64 %292, %i1
  %294 = getelementptr float, ptr %10, i64 %293
  %295 = call float @llvm.fabs.f32(float %290)
  %296 = fmul float %295, -2.000000e+00
  %297 = fcmp ogt float %296, 0x40561814A0000000
  %298 = select i1 %297, float 0x40561814A0000000, float %296
  %299 = fcmp olt float %298, 0xC055D58A00000000
  %300 = select i1 %299, float 0xC055D58A00000000, float %298
  %301 = fmul float %300, 0x3FF7154760000000
  %302 = fadd float %301, 5.000000e-01
  %303 = call float @llvm.floor.f32(float %302)
  %304 = fmul float %303, 0x3FE6300000000000
  %305 = fsub float %300, %304
  %306 = fmul float %303, 0xBF2BD01060000000
  %307 = fsub float %305, %306
  %308 = fmul float 0x3F2A0D2CE0000000, %307
  %309 = fadd float %308, 0x3F56E879C0000000
  %310 = fmul float %309, %307
  %311 = fadd float %310, 0x3F81112100000000
  %312 = fmul float %311, %307
  %313 = fadd float %312, 0x3FA5553820000000
  %314 = fmul float %313, %307
  %315 = fadd float %314, 0x3FC5555540000000
  %316 = fmul float %315, %307
  %317 = fadd float %316, 5.000000e-01
  %318 = fmul float %307, %307
  %319 = fmul float %317, %318
  %320 = fadd float %319, %307
  %321 = fadd float %320, 1.000000e+00
  %322 = fptosi float %303 to i32
  %323 = add i32 %322, 127
  %324 = shl i32 %323, 23
  %325 = bitcast i32 %324 to float
  %326 = fmul float %321, %325
  %327 = fcmp ogt float %296, 0x40562E4300000000
  %328 = select i1 %327, float 0x7FF0000000000000, float %326
  %329 = fcmp olt float %296, 0xC055D58A00000000
  %330 = select i1 %329, float 0.000000e+00, float %328
  %331 = fcmp uno float %296, %296
  %332 = select i1 %331, float %296, float %330
  %333 = fadd float 1.000000e+00, %332
  %334 = fsub float 1.000000e+00, %332
  %335 = fdiv float %334, %333
  %336 = call float @llvm.copysign.f32(float %335, float %290)
  store float %336, ptr %294, align 4
  %337 = add i64 0, %i0
  %338 = mul i64 %337, 4
  %339 = add i64 %338, %i1
  %340 = getelementptr float, ptr %11, i64 %339
  %341 = fmul float %278, %336
  store float %341, ptr %340, align 4
  %342 = add i64 %i1, 1
  br label %loop1, !llvm.loop !0

exit3:                                            ; preds = %loop1
  %343 = add i64 %i0, 1
  br label %loop
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.floor.f32(float) #1

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.fabs.f32(float) #1

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.copysign.f32(float, float) #1

define void @fusion_group_0_0(ptr %0, i64 %1, i64 %2) {
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
  call void @fusion_group_0_0_body(ptr %4, ptr %6, ptr %8, ptr %10, ptr %12, ptr %14, ptr %16, ptr %18, ptr %20, ptr %22, ptr %24, ptr %26, i64 %1, i64 %2)
  ret void
}

attributes #0 = { alwaysinline }
attributes #1 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }

!0 = distinct !{!0, !1}
!1 = !{!"llvm.loop.vectorize.enable", i1 true}

// fusion_group_1
/* loop nest: as scheduled for the CPU
for (int64_t i0 = 0; i0 < 2; i0++) {
  for (int64_t i1 = 0; i1 < 4; i1++) { // vectorize
    out0[i0, i1] = ((in0[i0, i1] + ((in1[i0, i1] * in2[i0, i1]) * (1.0f - (in3[i0, i1] * in3[i0, i1])))) * in4[i0, i1]);
    out1[i0, i1] = ((((in0[i0, i1] + ((in1[i0, i1] * in2[i0, i1]) * (1.0f - (in3[i0, i1] * in3[i0, i1])))) * in5[i0, i1]) * in6[i0, i1]) * (1.0f - in6[i0, i1]));
    out1[i0, (i1 + 4)] = ((((in0[i0, i1] + ((in1[i0, i1] * in2[i0, i1]) * (1.0f - (in3[i0, i1] * in3[i0, i1])))) * in7[i0, i1]) * in4[i0, i1]) * (1.0f - in4[i0, i1]));
    out1[i0, (i1 + 8)] = (((in0[i0, i1] + ((in1[i0, i1] * in2[i0, i1]) * (1.0f - (in3[i0, i1] * in3[i0, i1])))) * in6[i0, i1]) * (1.0f - (in5[i0, i1] * in5[i0, i1])));
    out1[i0, (i1 + 12)] = (((in1[i0, i1] * in3[i0, i1]) * in2[i0, i1]) * (1.0f - in2[i0, i1]));
  }
}
for (int64_t j0 = 0; j0 < 4; j0++) { // vectorize
  out2[j0] = 0.0f;
  out2[(j0 + 4)] = 0.0f;
  out2[(j0 + 8)] = 0.0f;
  out2[(j0 + 12)] = 0.0f;
}
for (int64_t r0 = 0; r0 < 2; r0++) {
  for (int64_t j0 = 0; j0 < 4; j0++) { // vectorize
    out2[j0] = (out2[j0] + out1[r0, j0]);
    out2[(j0 + 4)] = (out2[(j0 + 4)] + out1[r0, (j0 + 4)]);
    out2[(j0 + 8)] = (out2[(j0 + 8)] + out1[r0, (j0 + 8)]);
    out2[(j0 + 12)] = (out2[(j0 + 12)] + out1[r0, (j0 + 12)]);
  }
}
*/
; ModuleID = 'fusion_group_1'
source_filename = "fusion_group_1"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; Function Attrs: alwaysinline
define internal void @fusion_group_1_0_body(ptr noalias %0, ptr noalias %1, ptr noalias %2, ptr noalias %3, ptr noalias %4, ptr noalias %5, ptr noalias %6, ptr noalias %7, ptr noalias %8, ptr noalias %9, ptr noalias %10, i64 %11, i64 %12) #0 {
entry:
  br label %loop

loop:                                             ; preds = %exit3, %entry
  %i0 = phi i64 [ %11, %entry ], [ %101, %exit3 ]
  %13 = icmp slt i64 %i0, %12
  br i1 %13, label %body, label %exit

body:                                             ; preds = %loop
  br label %loop1

exit:                                             ; preds = %loop
  ret void

loop1:                                            ; preds = %body2, %body
  %i1 = phi i64 [ 0, %body ], [ %100, %body2 ]
  %14 = icmp slt i64 %i1, 4
  br i1 %14, label %body2, label %exit3

body2:                                            ; preds = %loop1
  %15 = add i64 0, %i0
  %16 = mul i64 %15, 4
  %17 = add i64 %16, %i1
  %18 = getelementptr float, ptr %8, i64 %17
  %19 = add i64 0, %i0
  %20 = mul i64 %19, 4
  %21 = add i64 %20, %i1
  %22 = getelementptr float, ptr %0, i64 %21
  %23 = load float, ptr %22, align 4
  %24 = add i64 0, %i0
  %25 = mul i64 %24, 4
  %26 = add i64 %25, %i1
  %27 = getelementptr float, ptr %1, i64 %26
  %28 = load float, ptr %27, align 4
  %29 = add i64 0, %i0
  %30 = mul i64 %29, 4
  %31 = add i64 %30, %i1
  %32 = getelementptr float, ptr %2, i64 %31
  %33 = load float, ptr %32, align 4
  %34 = fmul float %28, %33
  %35 = add i64 0, %i0
  %36 = mul i64 %35, 4
  %37 = add i64 %36, %i1
  %38 = getelementptr float, ptr %3, i64 %37
  %39 = load float, ptr %38, align 4
  %40 = fmul float %39, %39
  %41 = fsub float 1.000000e+00, %40
  %42 = fmul float %34, %41
  %43 = fadd float %23, %42
  %44 = add i64 0, %i0
  %45 = mul i64 %44, 4
  %46 = add i64 %45, %i1
  %47 = getelementptr float, ptr %4, i64 %46
  %48 = load float, ptr %47, align 4
  %49 = fmul float %43, %48
  store float %49, ptr %18, align 4
  %50 = add i64 0, %i0
  %51 = mul i64 %50, 16
  %52 = add i64 %51, %i1
  %53 = getelementptr float, ptr %9, i64 %52
  %54 = add i64 0, %i0
  %55 = mul i64 %54, 4
  %56 = add i64 %55, %i1
  %57 = getelementptr float, ptr %5, i64 %56
  %58 = load float, ptr %57, align 4
  %59 = fmul float %43, %58
  %60 = add i64 0, %i0
  %61 = mul i64 %60, 4
  %62 = add i64 %61, %i1
  %63 = getelementptr float, ptr %6, i64 %62
  %64 = load float, ptr %63, align 4
  %65 = fmul float %59, %64
  %66 = fsub float 1.000000e+00, %64
  %67 = fmul float %65, %66
  store float %67, ptr %53, align 4
  %68 = add i64 0, %i0
  %69 = add i64 %i1, 4
  %70 = mul i64 %68, 16
  %71 = add i64 %70, %69
  %72 = getelementptr float, ptr %9, i64 %71
  %73 = add i64 0, %i0
  %74 = mul i64 %73, 4
  %75 = add i64 %74, %i1
  %76 = getelementptr float, ptr %7, i64 %75
  %77 = load float, ptr %76, align 4
  %78 = fmul float %43, %77
  %79 = fmul float %78, %48
  %80 = fsub float 1.000000e+00, %48
  %81 = fmul float %79, %80
  store float %81, ptr %72, align 4
  %82 = add i64 0, %i0
  %83 = add i64 %i1, 8
  %84 = mul i64 %82, 16
  %85 = add i64 %84, %83
  %86 = getelementptr float, ptr %9, i64 %85
  %87 = fmul float %43, %64
  %88 = fmul float %58, %58
  %89 = fsub float 1.000000e+00, %88
  %90 = fmul float %87, %89
  store float %90, ptr %86, align 4
  %91 = add i64 0, %i0
  %92 = add i64 %i1, 12
  %93 = mul i64 %91, 16
  %94 = add i64 %93, %92
  %95 = getelementptr float, ptr %9, i64 %94
  %96 = fmul float %28, %39
  %97 = fmul float %96, %33
  %98 = fsub float 1.000000e+00, %33
  %99 = fmul float %97, %98
  store float %99, ptr %95, align 4
  %100 = add i64 %i1, 1
  br label %loop1, !llvm.loop !0

exit3:                                            ; preds = %loop1
  %101 = add i64 %i0, 1
  br label %loop
}

define void @fusion_group_1_0(ptr %0, i64 %1, i64 %2) {
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
  call void @fusion_group_1_0_body(ptr %4, ptr %6, ptr %8, ptr %10, ptr %12, ptr %14, ptr %16, ptr %18, ptr %20, ptr %22, ptr %24, i64 %1, i64 %2)
  ret void
}

; Function Attrs: alwaysinline
define internal void @fusion_group_1_1_body(ptr noalias %0, ptr noalias %1, ptr noalias %2, ptr noalias %3, ptr noalias %4, ptr noalias %5, ptr noalias %6, ptr noalias %7, ptr noalias %8, ptr noalias %9, ptr noalias %10, i64 %11, i64 %12) #0 {
entry:
  br label %loop

loop:                                             ; preds = %body, %entry
  %j0 = phi i64 [ %11, %entry ], [ %25, %body ]
  %13 = icmp slt i64 %j0, %12
  br i1 %13, label %body, label %exit

body:                                             ; preds = %loop
  %14 = add i64 0, %j0
  %15 = getelementptr float, ptr %10, i64 %14
  store float 0.000000e+00, ptr %15, align 4
  %16 = add i64 %j0, 4
  %17 = add i64 0, %16
  %18 = getelementptr float, ptr %10, i64 %17
  store float 0.000000e+00, ptr %18, align 4
  %19 = add i64 %j0, 8
  %20 = add i64 0, %19
  %21 = getelementptr float, ptr %10, i64 %20
  store float 0.000000e+00, ptr %21, align 4
  %22 = add i64 %j0, 12
  %23 = add i64 0, %22
  %24 = getelementptr float, ptr %10, i64 %23
  store float 0.000000e+00, ptr %24, align 4
  %25 = add i64 %j0, 1
  br label %loop, !llvm.loop !2

exit:                                             ; preds = %loop
  ret void
}

define void @fusion_group_1_1(ptr %0, i64 %1, i64 %2) {
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
  call void @fusion_group_1_1_body(ptr %4, ptr %6, ptr %8, ptr %10, ptr %12, ptr %14, ptr %16, ptr %18, ptr %20, ptr %22, ptr %24, i64 %1, i64 %2)
  ret void
}

; Function Attrs: alwaysinline
define internal void @fusion_group_1_2_body(ptr noalias %0, ptr noalias %1, ptr noalias %2, ptr noalias %3, ptr noalias %4, ptr noalias %5, ptr noalias %6, ptr noalias %7, ptr noalias %8, ptr noalias %9, ptr noalias %10, i64 %11, i64 %12) #0 {
entry:
  br label %loop

loop:                                             ; preds = %exit3, %entry
  %r0 = phi i64 [ %11, %entry ], [ %69, %exit3 ]
  %13 = icmp slt i64 %r0, %12
  br i1 %13, label %body, label %exit

body:                                             ; preds = %loop
  br label %loop1

exit:                                             ; preds = %loop
  ret void

loop1:                                            ; preds = %body2, %body
  %j0 = phi i64 [ 0, %body ], [ %68, %body2 ]
  %14 = icmp slt i64 %j0, 4
  br i1 %14, label %body2, label %exit3

body2:                                            ; preds = %loop1
  %15 = add i64 0, %j0
  %16 = getelementptr float, ptr %10, i64 %15
  %17 = add i64 0, %j0
  %18 = getelementptr float, ptr %10, i64 %17
  %19 = load float, ptr %18, align 4
  %20 = add i64 0, %r0
  %21 = mul i64 %20, 16
  %22 = add i64 %21, %j0
  %23 = getelementptr float, ptr %9, i64 %22
  %24 = load float, ptr %23, align 4
  %25 = fadd float %19, %24
  store float %25, ptr %16, align 4
  %26 = add i64 %j0, 4
  %27 = add i64 0, %26
  %28 = getelementptr float, ptr %10, i64 %27
  %29 = add i64 %j0, 4
  %30 = add i64 0, %29
  %31 = getelementptr float, ptr %10, i64 %30
  %32 = load float, ptr %31, align 4
  %33 = add i64 0, %r0
  %34 = add i64 %j0, 4
  %35 = mul i64 %33, 16
  %36 = add i64 %35, %34
  %37 = getelementptr float, ptr %9, i64 %36
  %38 = load float, ptr %37, align 4
  %39 = fadd float %32, %38
  store float %39, ptr %28, align 4
  %40 = add i64 %j0, 8
  %41 = add i64 0, %40
  %42 = getelementptr float, ptr %10, i64 %41
  %43 = add i64 %j0, 8
  %44 = add i64 0, %43
  %45 = getelementptr float, ptr %10, i64 %44
  %46 = load float, ptr %45, align 4
  %47 = add i64 0, %r0
  %48 = add i64 %j0, 8
  %49 = mul i64 %47, 16
  %50 = add i64 %49, %48
  %51 = getelementptr float, ptr %9, i64 %50
  %52 = load float, ptr %51, align 4
  %53 = fadd float %46, %52
  store float %53, ptr %42, align 4
  %54 = add i64 %j0, 12
  %55 = add i64 0, %54
  %56 = getelementptr float, ptr %10, i64 %55
  %57 = add i64 %j0, 12
  %58 = add i64 0, %57
  %59 = getelementptr float, ptr %10, i64 %58
  %60 = load float, ptr %59, align 4
  %61 = add i64 0, %r0
  %62 = add i64 %j0, 12
  %63 = mul i64 %61, 16
  %64 = add i64 %63, %62
  %65 = getelementptr float, ptr %9, i64 %64
  %66 = load float, ptr %65, align 4
  %67 = fadd float %60, %66
  store float %67, ptr %56, align 4
  %68 = add i64 %j0, 1
  br label %loop1, !llvm.loop !3

exit3:                                            ; preds = %loop1
  %69 = add i64 %r0, 1
  br label %loop
}

define void @fusion_group_1_2(ptr %0, i64 %1, i64 %2) {
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
  call void @fusion_group_1_2_body(ptr %4, ptr %6, ptr %8, ptr %10, ptr %12, ptr %14, ptr %16, ptr %18, ptr %20, ptr %22, ptr %24, i64 %1, i64 %2)
  ret void
}

attributes #0 = { alwaysinline }

!0 = distinct !{!0, !1}
!1 = !{!"llvm.loop.vectorize.enable", i1 true}
!2 = distinct !{!2, !1}
!3 = distinct !{!3, !1}

