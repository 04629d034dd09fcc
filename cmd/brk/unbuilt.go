package main

// brk bench is parsed so that it is refused with exit 2 before any
// traffic: this build does not serve it yet (nor --http2, refused in
// refuseUnserved).

type benchCmd struct{}

func (c *benchCmd) Run(e *env) error {
	return refuse("brk bench is not supported by this build yet")
}
