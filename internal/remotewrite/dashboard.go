package remotewrite

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// DashboardSeries returns, sorted and once each, the series names that a
// Grafana dashboard's PromQL queries use: every "expr" anywhere in it
// (panel targets, nested rows, annotations) and the query of each
// templating variable of type "query" (label_values(…), query_result(…)).
// It fails on JSON it cannot read, on a query it cannot scan, and on a
// dashboard without any query.
func DashboardSeries(dashboard []byte) ([]string, error) {
	exprs, err := dashboardQueries(dashboard)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range exprs {
		ns, err := seriesInPromQL(e)
		if err != nil {
			return nil, fmt.Errorf("prom: dashboard query %q: %w", e, err)
		}
		names = append(names, ns...)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// dashboardQueries returns the dashboard's PromQL queries, as
// DashboardSeries finds them, in no particular order.
func dashboardQueries(dashboard []byte) ([]string, error) {
	var root any
	if err := json.Unmarshal(dashboard, &root); err != nil {
		return nil, fmt.Errorf("prom: dashboard: %w", err)
	}
	var exprs []string
	var walk func(v any, inVariable bool)
	walk = func(v any, inVariable bool) {
		switch v := v.(type) {
		case map[string]any:
			isVar := inVariable || v["type"] == "query" && v["query"] != nil && v["targets"] == nil
			for k, c := range v {
				switch {
				case k == "expr":
					if s, ok := c.(string); ok {
						exprs = append(exprs, s)
						continue
					}
				case k == "query" && isVar:
					if s, ok := c.(string); ok {
						exprs = append(exprs, variableExpr(s))
						continue
					}
					if m, ok := c.(map[string]any); ok {
						if s, ok := m["query"].(string); ok {
							exprs = append(exprs, variableExpr(s))
						}
						continue
					}
				}
				walk(c, false)
			}
		case []any:
			for _, c := range v {
				walk(c, inVariable)
			}
		}
	}
	walk(root, false)
	if len(exprs) == 0 {
		return nil, fmt.Errorf("prom: dashboard has no PromQL query")
	}
	return exprs, nil
}

// variableExpr returns the PromQL inside a Grafana Prometheus variable
// query: label_values(SELECTOR, label) → SELECTOR, label_values(label) →
// "", query_result(EXPR) → EXPR, metrics(REGEX) → "", anything else as is.
func variableExpr(q string) string {
	q = strings.TrimSpace(q)
	inner := func(prefix string) (string, bool) {
		if !strings.HasPrefix(q, prefix+"(") || !strings.HasSuffix(q, ")") {
			return "", false
		}
		return q[len(prefix)+1 : len(q)-1], true
	}
	if s, ok := inner("label_values"); ok {
		if i := strings.LastIndexByte(s, ','); i >= 0 {
			return s[:i]
		}
		return ""
	}
	if s, ok := inner("query_result"); ok {
		return s
	}
	if _, ok := inner("metrics"); ok {
		return ""
	}
	return q
}

// promqlWords are PromQL's keywords and aggregation operators: words that
// are never a series name even when no parenthesis follows them.
var promqlWords = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "by": true,
	"without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true,
	"stdvar": true, "count": true, "count_values": true, "bottomk": true, "topk": true,
	"quantile": true, "limitk": true, "limit_ratio": true, "inf": true, "nan": true, "atan2": true,
	"start": true, "end": true,
}

// labelListWords introduce a parenthesised list of label names.
var labelListWords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// isWordStart and isWord are PromQL identifier bytes.
func isWordStart(c byte) bool { return c == '_' || c == ':' || 'a' <= c|0x20 && c|0x20 <= 'z' }
func isWord(c byte) bool      { return isWordStart(c) || '0' <= c && c <= '9' }

// skipString returns the index after the string literal at expr[i] (the
// quote).
func skipString(expr string, i int) (int, error) {
	q := expr[i]
	for j := i + 1; j < len(expr); j++ {
		if expr[j] == '\\' && q != '`' {
			j++
			continue
		}
		if expr[j] == q {
			return j + 1, nil
		}
	}
	return 0, fmt.Errorf("unterminated string at %d", i)
}

// closing returns the index after the bracket that closes expr[i] (open),
// skipping string literals.
func closing(expr string, i int, open, close byte) (int, error) {
	depth := 0
	for j := i; j < len(expr); j++ {
		switch c := expr[j]; {
		case c == '"' || c == '\'' || c == '`':
			k, err := skipString(expr, j)
			if err != nil {
				return 0, err
			}
			j = k - 1
		case c == open:
			depth++
		case c == close:
			depth--
			if depth == 0 {
				return j + 1, nil
			}
		}
	}
	return 0, fmt.Errorf("unbalanced %q at %d", open, i)
}

// nextNonSpace returns the first index at or after i that is not white
// space.
func nextNonSpace(expr string, i int) int {
	for i < len(expr) && (expr[i] == ' ' || expr[i] == '\t' || expr[i] == '\n' || expr[i] == '\r') {
		i++
	}
	return i
}

// seriesInPromQL returns the series names expr selects: bare metric names
// and {__name__="…"} matchers. It scans rather than parses: strings,
// label matchers, ranges and label lists are skipped; a word followed by
// "(" is a function; Grafana's $variables are skipped.
func seriesInPromQL(expr string) ([]string, error) {
	var names []string
	depth := 0
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			j, err := skipString(expr, i)
			if err != nil {
				return nil, err
			}
			i = j
		case c == '[':
			j, err := closing(expr, i, '[', ']')
			if err != nil {
				return nil, err
			}
			i = j
		case c == '{':
			j, err := closing(expr, i, '{', '}')
			if err != nil {
				return nil, err
			}
			names = append(names, nameMatchers(expr[i+1:j-1])...)
			i = j
		case c == '$':
			i++
			if i < len(expr) && expr[i] == '{' {
				j, err := closing(expr, i, '{', '}')
				if err != nil {
					return nil, err
				}
				i = j
				continue
			}
			for i < len(expr) && isWord(expr[i]) {
				i++
			}
		case '0' <= c && c <= '9' || c == '.':
			for i < len(expr) && (isWord(expr[i]) || expr[i] == '.' || (expr[i] == '+' || expr[i] == '-') && (expr[i-1]|0x20) == 'e') {
				i++
			}
		case isWordStart(c):
			j := i
			for j < len(expr) && isWord(expr[j]) {
				j++
			}
			word := expr[i:j]
			k := nextNonSpace(expr, j)
			switch {
			case labelListWords[strings.ToLower(word)] && k < len(expr) && expr[k] == '(':
				end, err := closing(expr, k, '(', ')')
				if err != nil {
					return nil, err
				}
				j = end
			case promqlWords[strings.ToLower(word)]:
			case k < len(expr) && expr[k] == '(': // a function
			default:
				names = append(names, word)
			}
			i = j
		case c == '(':
			depth++
			i++
		case c == ')':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("unbalanced ) at %d", i)
			}
			i++
		default:
			i++
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced (")
	}
	return names, nil
}

// nameMatchers returns the values of __name__="…" matchers in a label
// matcher list (without its braces).
func nameMatchers(list string) []string {
	var names []string
	for rest := list; ; {
		i := strings.Index(rest, "__name__")
		if i < 0 {
			return names
		}
		rest = strings.TrimLeft(rest[i+len("__name__"):], " \t")
		if !strings.HasPrefix(rest, "=") || strings.HasPrefix(rest, "=~") {
			continue
		}
		rest = strings.TrimLeft(rest[1:], " \t")
		if rest == "" || (rest[0] != '"' && rest[0] != '\'') {
			continue
		}
		if end := strings.IndexByte(rest[1:], rest[0]); end >= 0 {
			names = append(names, rest[1:1+end])
			rest = rest[1+end+1:]
		}
	}
}
