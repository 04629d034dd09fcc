package brk

import "runtime/debug"

// Version is brk's version as the Go toolchain recorded it in the binary:
// the module version (or "(devel)" for a build from a checkout), the VCS
// revision when known, and the Go version.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "brk (unknown version)"
	}
	v := "brk " + bi.Main.Version
	for _, st := range bi.Settings {
		if st.Key == "vcs.revision" && len(st.Value) >= 12 {
			v += " (" + st.Value[:12] + ")"
		}
	}
	return v + " " + bi.GoVersion
}
