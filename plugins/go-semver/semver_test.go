package semver

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseVersionAcceptsSemVerAndReportsWhatIsWrong(t *testing.T) {
	v, err := ParseVersion("v1.20.3-rc.1+build.7")
	if err != nil {
		t.Fatal(err)
	}
	if v.Major != 1 || v.Minor != 20 || v.Patch != 3 || !reflect.DeepEqual(v.Prerelease, []string{"rc", "1"}) || v.Build != "build.7" {
		t.Fatalf("parsed %+v", v)
	}
	if v.String() != "1.20.3-rc.1+build.7" {
		t.Fatalf("canonical form %q", v.String())
	}
	for text, reason := range map[string]string{
		"1.2":                      "has 2 number(s) where SemVer needs three",
		"01.2.3":                   `the major number "01" has a leading zero`,
		"1.x.3":                    `the minor part "x" is not a number`,
		"1.2.3-":                   "empty identifier",
		"1.2.3-01":                 `identifier "01" has a leading zero`,
		"1.2.3-rc_1":               `the character '_'`,
		"":                         "empty",
		"1.2.3.4":                  "has 4 number(s)",
		"1..3":                     "the minor number is missing",
		"1.2.3+a..b":               "empty identifier",
		"99999999999999999999.0.0": "too large",
	} {
		_, err := ParseVersion(text)
		if err == nil || !strings.Contains(err.Error(), reason) {
			t.Errorf("ParseVersion(%q): %v, want an error containing %q", text, err, reason)
		}
	}
}

func TestCompareFollowsSemVerPrecedence(t *testing.T) {
	// SemVer 2.0.0, section 11's example, in increasing order.
	ordered := []string{"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
		"1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.2.0", "1.10.0", "2.0.0"}
	for i := range ordered {
		for j := range ordered {
			a, _ := ParseVersion(ordered[i])
			b, _ := ParseVersion(ordered[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := Compare(a, b); got != want {
				t.Errorf("Compare(%s, %s) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
	a, _ := ParseVersion("1.0.0+a")
	b, _ := ParseVersion("1.0.0+b")
	if Compare(a, b) != 0 {
		t.Error("build metadata must not count")
	}
}

func TestConstraints(t *testing.T) {
	cases := []struct {
		constraint string
		means      string
		in, out    []string
	}{
		{">=1.2.0, <2", ">=1.2.0 <2.0.0-0", []string{"1.2.0", "1.9.9", "1.3.0-beta"}, []string{"1.1.9", "2.0.0", "2.0.0-rc.1"}},
		{">= 1.2 < 2", ">=1.2.0 <2.0.0-0", []string{"1.2.0"}, []string{"2.0.0"}},
		{"1.2", ">=1.2.0 <1.3.0-0", []string{"1.2.0", "1.2.99"}, []string{"1.3.0", "1.1.0"}},
		{"1.x", ">=1.0.0 <2.0.0-0", []string{"1.0.0", "1.99.0"}, []string{"2.0.0"}},
		{"*", ">=0.0.0", []string{"0.0.1", "9.9.9"}, nil},
		{"=1.2.3", "=1.2.3", []string{"1.2.3", "1.2.3+meta"}, []string{"1.2.4"}},
		{"!=1.2.3", "!=1.2.3", []string{"1.2.4"}, []string{"1.2.3"}},
		{">1.2", ">=1.3.0", []string{"1.3.0"}, []string{"1.2.9"}},
		{">1.2.3", ">1.2.3", []string{"1.2.4"}, []string{"1.2.3"}},
		{"<=1.2", "<1.3.0-0", []string{"1.2.9"}, []string{"1.3.0", "1.3.0-alpha"}},
		{"~1.2.3", ">=1.2.3 <1.3.0-0", []string{"1.2.3", "1.2.9"}, []string{"1.3.0", "1.2.2"}},
		{"~1", ">=1.0.0 <2.0.0-0", []string{"1.5.0"}, []string{"2.0.0"}},
		{"^1.2.3", ">=1.2.3 <2.0.0-0", []string{"1.9.0"}, []string{"2.0.0", "1.2.2"}},
		{"^0.2.3", ">=0.2.3 <0.3.0-0", []string{"0.2.9"}, []string{"0.3.0"}},
		{"^0.0.3", ">=0.0.3 <0.0.4-0", []string{"0.0.3"}, []string{"0.0.4"}},
		{"^1.4 || ~2.0.3", ">=1.4.0 <2.0.0-0 || >=2.0.3 <2.1.0-0", []string{"1.4.0", "2.0.5"}, []string{"2.1.0", "1.3.0"}},
	}
	for _, c := range cases {
		parsed, err := ParseConstraint(c.constraint)
		if err != nil {
			t.Errorf("%q: %v", c.constraint, err)
			continue
		}
		if parsed.String() != c.means {
			t.Errorf("%q means %q, want %q", c.constraint, parsed.String(), c.means)
		}
		for _, text := range c.in {
			v, err := ParseVersion(text)
			if err != nil || !parsed.Allows(v) {
				t.Errorf("%q should admit %s (%v)", c.constraint, text, err)
			}
		}
		for _, text := range c.out {
			v, err := ParseVersion(text)
			if err != nil || parsed.Allows(v) {
				t.Errorf("%q should not admit %s (%v)", c.constraint, text, err)
			}
		}
	}
}

func TestAnInvalidConstraintSaysWhyAndHowToWriteOne(t *testing.T) {
	for constraint, reason := range map[string]string{
		"":             "it is empty",
		">=1.2.0, <<2": `"<<2" starts with "<<", which is not an operator`,
		"1.2 - 2.3":    "hyphen ranges (1.2 - 2.3) are not supported",
		">=":           `the operator ">=" has no version after it`,
		"^1 ||":        "an alternative between `||` is empty",
		"!=1.2":        "needs a whole version",
		"1.x.3":        "a number after a wildcard",
		"banana":       `the major part "banana" is not a number`,
	} {
		_, err := ParseConstraint(constraint)
		var constraintError *ConstraintError
		if !errors.As(err, &constraintError) {
			t.Errorf("%q: %v, want a ConstraintError", constraint, err)
			continue
		}
		if !strings.Contains(err.Error(), reason) || !strings.Contains(err.Error(), `such as ">=1.2.0, <2"`) {
			t.Errorf("%q: %q, want %q and an example", constraint, err, reason)
		}
	}
}

func TestMatchSortsReportsInvalidVersionsAndProgress(t *testing.T) {
	var seen []string
	result, err := Match([]string{"1.10.0", "1.2", "v1.2.0", "2.0.0", "1.9.0-beta", "01.0.0"}, ">=1.2.0, <2",
		func(done, total int, version string) {
			if total != 6 || done != len(seen)+1 {
				t.Errorf("progress %d of %d after %d", done, total, len(seen))
			}
			seen = append(seen, version)
		})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(result.Matching, []string{"v1.2.0", "1.9.0-beta", "1.10.0"}) {
		t.Errorf("matching %q", result.Matching)
	}
	if result.Highest == nil || *result.Highest != "1.10.0" {
		t.Errorf("highest %v", result.Highest)
	}
	if len(result.Invalid) != 2 || result.Invalid[0].Version != "1.2" || result.Invalid[1].Version != "01.0.0" {
		t.Errorf("invalid %+v", result.Invalid)
	}
	if result.Checked != 6 || len(seen) != 6 || result.Means != ">=1.2.0 <2.0.0-0" {
		t.Errorf("checked %d, progress %q, means %q", result.Checked, seen, result.Means)
	}
	summary := result.Summary()
	for _, phrase := range []string{"3 of 6 version(s) match >=1.2.0, <2", "the highest is 1.10.0", "2 not SemVer", `"1.2" has 2 number(s)`} {
		if !strings.Contains(summary, phrase) {
			t.Errorf("%q missing from %q", phrase, summary)
		}
	}

	none, err := Match([]string{"3.0.0"}, "<1", nil)
	if err != nil || none.Highest != nil || len(none.Matching) != 0 || !strings.Contains(none.Summary(), "0 of 1 version(s) match <1 (<1.0.0-0).") {
		t.Errorf("%+v %v", none, err)
	}
	if _, err := Match(nil, ">=>1", nil); err == nil {
		t.Error("an invalid constraint must fail the match")
	}
}
