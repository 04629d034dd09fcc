package sched

import "github.com/brk-bench/brk/proto"

// Session is the protocol session the worker drives (package proto holds
// the contract, so that protocol packages need not import the engine).
type Session = proto.Session

// Completion is one finished response.
type Completion = proto.Completion
