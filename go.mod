module brk

go 1.26.0

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0 // indirect
	github.com/alecthomas/kong v1.17.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
