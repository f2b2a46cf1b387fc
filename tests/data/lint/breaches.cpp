// scripts/lint's own test (tests/CMakeLists.txt, lint.finds_breaches): a switch over OpKind with a
// default label, which the rule must find at line 9, and switches it must leave alone.
#include "ir/op.h"

int breach(gj::OpKind k) {
  switch (k) {
    case gj::OpKind::Add: return 1;
    // "default:" in a comment or a string is not a label
    default: return 0;
  }
}

int elsewhere(int x) {
  switch (x) {  // not over OpKind: a default is fine
    case 1: return 1;
    default: return 0;
  }
}
