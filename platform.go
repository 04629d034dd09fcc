package brk

import (
	"fmt"
	"runtime"
)

// SupportedPlatforms names the operating systems brk runs load tests on:
// those with a readiness poller (epoll, kqueue) and nonblocking sockets in
// the conn package.
const SupportedPlatforms = "Linux, macOS, FreeBSD, DragonFly"

// CheckPlatform reports an error on an operating system brk compiles for
// but cannot run load tests on (Windows, OpenBSD, ...).
func CheckPlatform() error { return checkPlatform(runtime.GOOS) }

func checkPlatform(goos string) error {
	switch goos {
	case "linux", "darwin", "freebsd", "dragonfly":
		return nil
	}
	return fmt.Errorf("%s is not supported (%s)", goos, SupportedPlatforms)
}
