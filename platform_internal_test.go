package brk

import "testing"

// TestCheckPlatform: the platforms the build tags serve are accepted; any
// other is refused with one line naming it and the supported ones.
func TestCheckPlatform(t *testing.T) {
	for _, goos := range []string{"linux", "darwin", "freebsd", "dragonfly"} {
		if err := checkPlatform(goos); err != nil {
			t.Errorf("%s: %v", goos, err)
		}
	}
	for goos, want := range map[string]string{
		"windows": "windows is not supported (Linux, macOS, FreeBSD, DragonFly)",
		"openbsd": "openbsd is not supported (Linux, macOS, FreeBSD, DragonFly)",
	} {
		if err := checkPlatform(goos); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", goos, err, want)
		}
	}
	if err := CheckPlatform(); err != nil {
		t.Errorf("this platform: %v", err)
	}
}
