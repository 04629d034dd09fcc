package brk

import (
	"runtime/debug"
	"testing"
)

// The version comes from the build info: the module version, else the VCS
// revision and time, else a (devel) that says nothing was recorded.
func TestVersionOf(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "8210cedbe28212d28453a74ebdd05b7aa25c527a"},
		{Key: "vcs.time", Value: "2026-12-01T16:07:42Z"}, {Key: "vcs.modified", Value: "false"}}
	for _, c := range []struct {
		main     string
		settings []debug.BuildSetting
		want     string
	}{
		{"v1.2.3", nil, "brk v1.2.3 go1.26.0"},
		{"v0.0.0-20261201160742-8210cedbe282", vcs, "brk v0.0.0-20261201160742-8210cedbe282 go1.26.0"},
		{"(devel)", vcs, "brk (devel) 8210cedbe282 2026-12-01T16:07:42Z go1.26.0"},
		{"(devel)", append(vcs[:3:3], debug.BuildSetting{Key: "vcs.modified", Value: "true"}), "brk (devel) 8210cedbe282 2026-12-01T16:07:42Z (modified) go1.26.0"},
		{"(devel)", nil, "brk (devel; the build recorded no module version or VCS revision) go1.26.0"},
	} {
		bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/brk-bench/brk", Version: c.main}, Settings: c.settings}
		if got := versionOf(bi); got != c.want {
			t.Errorf("versionOf(%s, %v) = %q, want %q", c.main, c.settings, got, c.want)
		}
	}
}
