package main

// brk rate is parsed so that it is refused with exit 2 before any traffic:
// this build does not serve it yet.

type rateCmd struct {
	URL string `arg:""`
	loadFlags
	RateDepth int `help:"Max outstanding per connection."`
}

func (c *rateCmd) Run(e *env) error {
	return refuse("the rate test (brk rate) is not supported by this build yet")
}
