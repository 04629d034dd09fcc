package main

// brk rate and brk bench are parsed so that they are refused with exit 2
// before any traffic: this build does not serve them yet.

type rateCmd struct {
	URL string `arg:""`
	loadFlags
	RateDepth int `help:"Max outstanding per connection."`
}

func (c *rateCmd) Run(e *env) error {
	return refuse("the rate test (brk rate) is not supported by this build yet")
}

type benchCmd struct{}

func (c *benchCmd) Run(e *env) error {
	return refuse("brk bench is not supported by this build yet")
}
