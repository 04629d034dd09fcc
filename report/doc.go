// Package report presents brk's results: the human text of a run (one
// block per phase and the final line), the live progress line, and the
// self-contained HTML report. The JSON report is the brk.Result itself.
//
// It uses the brk library API only; the brk package never imports it. The
// CLI attaches Text (or Live, for a terminal) as the run's observer and
// calls WriteSummary, FinalLine and WriteHTML when the run ends.
package report
