package brk

import (
	"runtime/debug"
	"strings"
)

// Version is brk's version as the Go toolchain recorded it in the binary,
// with the Go version: the module version when there is one (go install
// …@v1.2.3; go build in a git checkout records a pseudo-version such as
// v0.0.0-20261201160742-8210cedbe282, +dirty with uncommitted changes);
// else the VCS revision and its time when the build recorded them; else
// "(devel)" and that the build recorded neither (go run, -buildvcs=false,
// a copy without .git, a git worktree whose .git is a file).
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "brk (unknown version)"
	}
	return versionOf(bi)
}

func versionOf(bi *debug.BuildInfo) string {
	var rev, at string
	modified := false
	for _, st := range bi.Settings {
		switch st.Key {
		case "vcs.revision":
			rev = st.Value
		case "vcs.time":
			at = st.Value
		case "vcs.modified":
			modified = st.Value == "true"
		}
	}
	v := bi.Main.Version
	switch {
	case v != "" && v != "(devel)":
		v = "brk " + v
	case rev != "":
		v = "brk (devel) " + rev[:min(12, len(rev))]
		if at != "" {
			v += " " + at
		}
		if modified && !strings.HasSuffix(v, "+dirty") {
			v += " (modified)"
		}
	default:
		v = "brk (devel; the build recorded no module version or VCS revision)"
	}
	return v + " " + bi.GoVersion
}
