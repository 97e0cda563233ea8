// Package semver is what the go-semver plugin's tool does, apart from the
// plugin contract (plugin/plugin.go): Semantic Versioning 2.0.0 versions and
// version constraints, in plain Go that semver_test.go tests natively with
// `go test`.
package semver

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Version is a SemVer 2.0.0 version: MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD].
type Version struct {
	Major, Minor, Patch uint64
	// Prerelease identifiers (the dot-separated parts after `-`); none for a
	// release.
	Prerelease []string
	// Build metadata (after `+`), which precedence ignores.
	Build string
	// Text is the version as it was written.
	Text string
}

// ParseVersion reads a SemVer 2.0.0 version. A leading `v` (as in Git and Go
// tags, "v1.2.3") is accepted. The error says what is wrong in words a
// caller can act on.
func ParseVersion(text string) (Version, error) {
	v := Version{Text: text}
	s := strings.TrimPrefix(text, "v")
	if s == "" {
		return v, fmt.Errorf("empty; a version looks like 1.2.3")
	}
	if i := strings.IndexByte(s, '+'); i >= 0 {
		v.Build = s[i+1:]
		s = s[:i]
		if err := identifiers("build metadata", v.Build, false); err != nil {
			return v, err
		}
	}
	if i := strings.IndexByte(s, '-'); i >= 0 {
		pre := s[i+1:]
		s = s[:i]
		if err := identifiers("pre-release", pre, true); err != nil {
			return v, err
		}
		v.Prerelease = strings.Split(pre, ".")
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return v, fmt.Errorf("has %d number(s) where SemVer needs three, MAJOR.MINOR.PATCH (e.g. 1.2.0)", len(parts))
	}
	numbers := [3]*uint64{&v.Major, &v.Minor, &v.Patch}
	for i, part := range parts {
		n, err := number(partNames[i], part)
		if err != nil {
			return v, err
		}
		*numbers[i] = n
	}
	return v, nil
}

var partNames = [3]string{"major", "minor", "patch"}

// number reads one of MAJOR, MINOR and PATCH: digits, no leading zero.
func number(name, text string) (uint64, error) {
	if text == "" {
		return 0, fmt.Errorf("the %s number is missing", name)
	}
	for _, c := range text {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("the %s part %q is not a number", name, text)
		}
	}
	if len(text) > 1 && text[0] == '0' {
		return 0, fmt.Errorf("the %s number %q has a leading zero, which SemVer forbids", name, text)
	}
	n, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("the %s number %q is too large", name, text)
	}
	return n, nil
}

// identifiers checks dot-separated identifiers: non-empty, of
// [0-9A-Za-z-]; numeric ones without a leading zero when `numeric` says so
// (pre-release identifiers; build metadata may have them).
func identifiers(what, text string, numeric bool) error {
	for _, id := range strings.Split(text, ".") {
		if id == "" {
			return fmt.Errorf("the %s %q has an empty identifier", what, text)
		}
		digits := true
		for _, c := range id {
			switch {
			case c >= '0' && c <= '9':
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '-':
				digits = false
			default:
				return fmt.Errorf("the %s %q has the character %q; use only letters, digits, `-` and `.`", what, text, c)
			}
		}
		if numeric && digits && len(id) > 1 && id[0] == '0' {
			return fmt.Errorf("the %s identifier %q has a leading zero, which SemVer forbids", what, id)
		}
	}
	return nil
}

// String is the version in canonical form, without a leading `v`.
func (v Version) String() string {
	s := fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
	if len(v.Prerelease) > 0 {
		s += "-" + strings.Join(v.Prerelease, ".")
	}
	if v.Build != "" {
		s += "+" + v.Build
	}
	return s
}

// Compare orders by SemVer precedence: -1, 0 or 1. Build metadata does not
// count; a pre-release comes before its release; pre-release identifiers
// compare numerically when both are numbers, numbers before words, and a
// shorter list first when one is a prefix of the other.
func Compare(a, b Version) int {
	for _, pair := range [3][2]uint64{{a.Major, b.Major}, {a.Minor, b.Minor}, {a.Patch, b.Patch}} {
		if pair[0] != pair[1] {
			return order(pair[0] < pair[1])
		}
	}
	switch {
	case len(a.Prerelease) == 0 && len(b.Prerelease) == 0:
		return 0
	case len(a.Prerelease) == 0:
		return 1
	case len(b.Prerelease) == 0:
		return -1
	}
	for i := 0; i < len(a.Prerelease) && i < len(b.Prerelease); i++ {
		x, y := a.Prerelease[i], b.Prerelease[i]
		if x == y {
			continue
		}
		xn, xerr := strconv.ParseUint(x, 10, 64)
		yn, yerr := strconv.ParseUint(y, 10, 64)
		switch {
		case xerr == nil && yerr == nil:
			return order(xn < yn)
		case xerr == nil:
			return -1
		case yerr == nil:
			return 1
		default:
			return order(x < y)
		}
	}
	if len(a.Prerelease) == len(b.Prerelease) {
		return 0
	}
	return order(len(a.Prerelease) < len(b.Prerelease))
}

func order(less bool) int {
	if less {
		return -1
	}
	return 1
}

// ---------------------------------------------------------------- constraints

// A comparator is one bound: op is one of = != > >= < <=.
type comparator struct {
	op      string
	version Version
}

func (c comparator) allows(v Version) bool {
	n := Compare(v, c.version)
	switch c.op {
	case "=":
		return n == 0
	case "!=":
		return n != 0
	case ">":
		return n > 0
	case ">=":
		return n >= 0
	case "<":
		return n < 0
	default: // "<="
		return n <= 0
	}
}

func (c comparator) String() string { return c.op + c.version.String() }

// Constraint is a set of versions: alternatives separated by `||`, each a
// list of comparators that must all hold, separated by commas or spaces.
type Constraint struct {
	alternatives [][]comparator
}

// ConstraintError says why a constraint could not be read.
type ConstraintError struct {
	Constraint string
	Reason     string
}

func (e *ConstraintError) Error() string {
	return fmt.Sprintf("constraint %q is not valid: %s. Write comparators such as \">=1.2.0, <2\" "+
		"(all must hold; `||` separates alternatives), using =, !=, >, >=, <, <=, ~ (same minor) "+
		"or ^ (same major), each followed by a version whose trailing parts may be left out or be x",
		e.Constraint, e.Reason)
}

// ParseConstraint reads a constraint such as ">=1.2.0, <2", "^1.4 || ~2.0.3"
// or "1.x". A version left partial (1.2, 1.x, 1) stands for a range: "1.2"
// is >=1.2.0, <1.3.0-0. The lowest pre-release "-0" makes an upper bound
// exclude the pre-releases of the next version: "<2" does not admit
// 2.0.0-rc.1.
func ParseConstraint(text string) (Constraint, error) {
	var c Constraint
	fail := func(format string, args ...any) (Constraint, error) {
		return Constraint{}, &ConstraintError{Constraint: text, Reason: fmt.Sprintf(format, args...)}
	}
	if strings.TrimSpace(text) == "" {
		return fail("it is empty")
	}
	for _, alternative := range strings.Split(text, "||") {
		terms, err := terms(alternative)
		if err != nil {
			return fail("%s", err)
		}
		if len(terms) == 0 {
			return fail("an alternative between `||` is empty")
		}
		var all []comparator
		for _, term := range terms {
			bounds, err := expand(term)
			if err != nil {
				return fail("%q %s", term, err)
			}
			all = append(all, bounds...)
		}
		c.alternatives = append(c.alternatives, all)
	}
	return c, nil
}

// terms splits one alternative into its comparators: separated by commas
// or whitespace, with an operator written apart from its version (">= 1.2")
// joined to it.
func terms(alternative string) ([]string, error) {
	fields := strings.FieldsFunc(alternative, func(r rune) bool {
		return r == ',' || r == ' ' || r == '\t' || r == '\n'
	})
	var out []string
	for i := 0; i < len(fields); i++ {
		field := fields[i]
		if field == "-" {
			return nil, fmt.Errorf("hyphen ranges (1.2 - 2.3) are not supported; write >=1.2, <=2.3")
		}
		if strings.Trim(field, "=!<>~^") == "" {
			if i+1 == len(fields) {
				return nil, fmt.Errorf("the operator %q has no version after it", field)
			}
			field += fields[i+1]
			i++
		}
		out = append(out, field)
	}
	return out, nil
}

// partial is a version whose trailing parts may be missing or wildcards:
// `given` counts the numbers written (0 to 3).
type partial struct {
	numbers    [3]uint64
	given      int
	prerelease []string
}

func (p partial) version(numbers [3]uint64, prerelease []string) Version {
	return Version{Major: numbers[0], Minor: numbers[1], Patch: numbers[2], Prerelease: prerelease}
}

// lower is the least version the partial version covers.
func (p partial) lower() Version { return p.version(p.numbers, p.prerelease) }

// bumped is the first version past part `at` (0 major, 1 minor, 2 patch)
// with its lowest pre-release, "-0": the exclusive upper bound of a range.
func (p partial) bumped(at int) Version {
	var n [3]uint64
	copy(n[:at], p.numbers[:at])
	n[at] = p.numbers[at] + 1
	return p.version(n, []string{"0"})
}

func parsePartial(text string) (partial, error) {
	var p partial
	s := strings.TrimPrefix(text, "v")
	if i := strings.IndexByte(s, '+'); i >= 0 {
		s = s[:i] // build metadata never matters to a bound
	}
	pre := ""
	if i := strings.IndexByte(s, '-'); i >= 0 {
		s, pre = s[:i], s[i+1:]
	}
	if s == "" {
		return p, fmt.Errorf("has no version")
	}
	parts := strings.Split(s, ".")
	if len(parts) > 3 {
		return p, fmt.Errorf("has %d numbers; a version has at most three, MAJOR.MINOR.PATCH", len(parts))
	}
	wild := false
	for i, part := range parts {
		if part == "x" || part == "X" || part == "*" {
			wild = true
			continue
		}
		if wild {
			return p, fmt.Errorf("has a number after a wildcard")
		}
		n, err := number(partNames[i], part)
		if err != nil {
			return p, err
		}
		p.numbers[i] = n
		p.given++
	}
	if pre != "" {
		if p.given < 3 {
			return p, fmt.Errorf("has a pre-release on a partial version; write all three numbers")
		}
		if err := identifiers("pre-release", pre, true); err != nil {
			return p, err
		}
		p.prerelease = strings.Split(pre, ".")
	}
	return p, nil
}

// expand turns one comparator as written into bounds on whole versions.
func expand(term string) ([]comparator, error) {
	op := term[:len(term)-len(strings.TrimLeft(term, "=!<>~^"))]
	rest := term[len(op):]
	switch op {
	case "", "=", "==", "!=", ">", ">=", "<", "<=", "~", "^":
	default:
		return nil, fmt.Errorf("starts with %q, which is not an operator", op)
	}
	p, err := parsePartial(rest)
	if err != nil {
		return nil, err
	}
	between := func(upperAt int) []comparator {
		return []comparator{{">=", p.lower()}, {"<", p.bumped(upperAt)}}
	}
	anything := []comparator{{">=", Version{}}}
	switch op {
	case "", "=", "==":
		if p.given == 0 {
			return anything, nil
		}
		if p.given == 3 {
			return []comparator{{"=", p.lower()}}, nil
		}
		return between(p.given - 1), nil
	case "!=":
		if p.given < 3 {
			return nil, fmt.Errorf("needs a whole version (MAJOR.MINOR.PATCH)")
		}
		return []comparator{{"!=", p.lower()}}, nil
	case ">":
		if p.given == 0 {
			return nil, fmt.Errorf("admits no version")
		}
		if p.given == 3 {
			return []comparator{{">", p.lower()}}, nil
		}
		next := p.bumped(p.given - 1)
		next.Prerelease = nil
		return []comparator{{">=", next}}, nil
	case ">=":
		return []comparator{{">=", p.lower()}}, nil
	case "<":
		if p.given == 0 {
			return nil, fmt.Errorf("admits no version")
		}
		bound := p.lower()
		if p.given < 3 {
			bound.Prerelease = []string{"0"}
		}
		return []comparator{{"<", bound}}, nil
	case "<=":
		if p.given == 0 {
			return anything, nil
		}
		if p.given == 3 {
			return []comparator{{"<=", p.lower()}}, nil
		}
		return []comparator{{"<", p.bumped(p.given - 1)}}, nil
	case "~":
		if p.given == 0 {
			return anything, nil
		}
		if p.given == 1 {
			return between(0), nil
		}
		return between(1), nil
	default: // "^"
		switch {
		case p.given == 0:
			return anything, nil
		case p.numbers[0] > 0 || p.given == 1:
			return between(0), nil
		case p.numbers[1] > 0 || p.given == 2:
			return between(1), nil
		default:
			return between(2), nil
		}
	}
}

// Allows says whether v is in the constraint's set.
func (c Constraint) Allows(v Version) bool {
	for _, alternative := range c.alternatives {
		ok := true
		for _, bound := range alternative {
			if !bound.allows(v) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// String is the constraint as the bounds it stands for, e.g.
// ">=1.2.0 <2.0.0-0 || =3.0.0".
func (c Constraint) String() string {
	alternatives := make([]string, len(c.alternatives))
	for i, alternative := range c.alternatives {
		bounds := make([]string, len(alternative))
		for j, bound := range alternative {
			bounds[j] = bound.String()
		}
		alternatives[i] = strings.Join(bounds, " ")
	}
	return strings.Join(alternatives, " || ")
}

// ---------------------------------------------------------------- the tool

// Invalid is a version string that is not SemVer, and why.
type Invalid struct {
	Version string `json:"version"`
	Reason  string `json:"reason"`
}

// Result is what semver_match returns (its structured content).
type Result struct {
	// Constraint as written, and Means: the bounds it stands for.
	Constraint string `json:"constraint"`
	Means      string `json:"means"`
	// Matching: the versions in the constraint, in precedence order
	// (lowest first), as written.
	Matching []string `json:"matching"`
	// Highest matching version, or nil when none matches.
	Highest *string `json:"highest"`
	// Invalid: the strings that are not SemVer versions, in input order.
	Invalid []Invalid `json:"invalid"`
	// Checked counts the versions given.
	Checked int `json:"checked"`
}

// Progress is told after each version is checked: done of total.
type Progress func(done, total int, version string)

// Match checks each of versions against constraint. Only an invalid
// constraint is an error; invalid versions are reported in the result.
func Match(versions []string, constraint string, progress Progress) (Result, error) {
	c, err := ParseConstraint(constraint)
	if err != nil {
		return Result{}, err
	}
	result := Result{
		Constraint: constraint,
		Means:      c.String(),
		Matching:   []string{},
		Invalid:    []Invalid{},
		Checked:    len(versions),
	}
	var matching []Version
	for i, text := range versions {
		v, err := ParseVersion(text)
		if err != nil {
			result.Invalid = append(result.Invalid, Invalid{Version: text, Reason: err.Error()})
		} else if c.Allows(v) {
			matching = append(matching, v)
		}
		if progress != nil {
			progress(i+1, len(versions), text)
		}
	}
	sort.SliceStable(matching, func(i, j int) bool { return Compare(matching[i], matching[j]) < 0 })
	for _, v := range matching {
		result.Matching = append(result.Matching, v.Text)
	}
	if len(matching) > 0 {
		highest := matching[len(matching)-1].Text
		result.Highest = &highest
	}
	return result, nil
}

// Summary is the result in a sentence or three, for the model to read.
func (r Result) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d version(s) match %s (%s)", len(r.Matching), r.Checked, r.Constraint, r.Means)
	if r.Highest != nil {
		fmt.Fprintf(&b, "; the highest is %s.", *r.Highest)
	} else {
		b.WriteString(".")
	}
	if len(r.Matching) > 0 && len(r.Matching) <= 20 {
		fmt.Fprintf(&b, "\nMatching: %s.", strings.Join(r.Matching, ", "))
	}
	if n := len(r.Invalid); n > 0 {
		fmt.Fprintf(&b, "\n%d not SemVer: ", n)
		for i, invalid := range r.Invalid {
			if i == 5 {
				fmt.Fprintf(&b, "; and %d more", n-5)
				break
			}
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%q %s", invalid.Version, invalid.Reason)
		}
		b.WriteString(".")
	}
	return b.String()
}
