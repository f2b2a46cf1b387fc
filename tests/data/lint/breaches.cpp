// scripts/lint's own test (tests/CMakeLists.txt, lint.finds_breaches): a switch over OpKind with a
// default label (line 10), switches the rule must leave alone, a getenv outside its file (line 21) and
// a comment quoting a measurement (line 22).
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

const char* home() { return std::getenv("HOME"); }  // read outside support/environment.cpp
// A measured comment: 0.84 ms on 2026-11-27 (line 22).
