package main

import (
	"bytes"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// reportFile is a report file (--json, --report, --csv) being written.
// Every report goes to a temporary file beside its path, which commit
// renames into place once the report is complete: a run killed by a
// signal brk cannot catch (SIGKILL, the OOM killer, a lost node) leaves
// the previous report, or none, never a partial or empty one; at worst a
// hidden ".NAME.tmp…" file beside it. A path that exists and is not a
// regular file (/dev/stdout, /dev/null, a FIFO) is written in place, as
// it cannot be replaced. Every report writer of cmd/brk creates its file
// with createReport (TestReportWritersAtomic).
type reportFile struct {
	path string // where the report goes (a symbolic link's target)
	tmp  string // the temporary file; "" when written in place
	f    *os.File
	done bool
	// buf holds the report of an existing file in a directory brk may not
	// create files in: written over the file only at commit.
	buf *bytes.Buffer
}

// createReport opens path's report: before the run, so that a path that
// cannot be written is refused before any traffic. Its error names path,
// as os.Create's would.
func createReport(path string) (*reportFile, error) {
	target := path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		target = real // write beside the link's target; the link stays
	}
	perm := fs.FileMode(0o666) // less the umask, as os.Create
	st, err := os.Stat(target)
	switch {
	case err == nil && !st.Mode().IsRegular():
		// A directory fails here as os.Create fails; a device or a FIFO
		// is written in place.
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
		if err != nil {
			return nil, err
		}
		return &reportFile{path: path, f: f}, nil
	case err == nil:
		// An existing report: it must be writable (the old one stays until
		// the new one is complete), and the new one keeps its mode.
		f, err := os.OpenFile(target, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		perm = st.Mode().Perm()
		r, err := createBeside(path, target, perm)
		if errors.Is(err, fs.ErrPermission) {
			// A writable report in a directory brk cannot create files
			// in: it is rewritten in place, complete, at commit.
			return &reportFile{path: target, f: f, buf: &bytes.Buffer{}}, nil
		}
		f.Close()
		return r, err
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	return createBeside(path, target, perm)
}

// createBeside opens the temporary file of target's report.
func createBeside(path, target string, perm fs.FileMode) (*reportFile, error) {
	dir, base := filepath.Split(target)
	for range 100 {
		tmp := filepath.Join(dir, "."+base+".tmp"+strconv.FormatUint(rand.Uint64()>>32, 36))
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = &fs.PathError{Op: "open", Path: path, Err: pe.Err}
			}
			return nil, err
		}
		if perm != 0o666 {
			f.Chmod(perm) // an existing report's mode, not the umask's
		}
		return &reportFile{path: target, tmp: tmp, f: f}, nil
	}
	return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrExist}
}

func (r *reportFile) Write(p []byte) (int, error) {
	if r.buf != nil {
		return r.buf.Write(p)
	}
	return r.f.Write(p)
}

// commit completes the report: flushed to disk (some file systems report
// a failed write only then), closed and renamed into place. On an error
// the temporary file is removed and the previous report stays.
func (r *reportFile) commit() error {
	if r.done {
		return errors.New("report already closed")
	}
	r.done = true
	if r.buf != nil {
		err := r.f.Truncate(0)
		if err == nil {
			_, err = r.f.Write(r.buf.Bytes())
		}
		if err == nil {
			err = r.f.Sync()
		}
		if cerr := r.f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	if r.tmp == "" {
		return r.f.Close()
	}
	err := r.f.Sync()
	if cerr := r.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(r.tmp, r.path)
	}
	if err != nil {
		os.Remove(r.tmp)
	}
	return err
}

// abort drops an uncommitted report (a run refused after the files were
// opened): the previous report stays. It is a no-op after commit.
func (r *reportFile) abort() {
	if r == nil || r.done {
		return
	}
	r.done = true
	r.f.Close()
	if r.tmp != "" {
		os.Remove(r.tmp)
	}
}
