package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// libraryDirs are the public packages, by the name a program calls them,
// and their folders.
var libraryDirs = map[string]string{"multi": "multi", "nodes": "nodes", "pidfile": "nodes/pidfile", "waiter": "waiter"}

// externalRE is the package clause of a program that uses the packages
// from outside: a _test package, or a main.
var externalRE = regexp.MustCompile(`(?m)^package (\w+_test|main)$`)

// qualifiedRE is a name of the public packages as README writes it:
// pkg.Name or pkg.Type.Method.
var qualifiedRE = regexp.MustCompile(`^(multi|nodes|pidfile|waiter)\.([A-Z][A-Za-z0-9]*)(\.([A-Z][A-Za-z0-9]*))?$`)

// TestReadmeLibraryNamesTested holds README's library section to the
// tests: each name it lists (pkg.Name, pkg.Type.Method) is used by a
// test written as an application would (a _test package of the public
// packages, or the orchestrator the integration tests build).
func TestReadmeLibraryNamesTested(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "\n## Use as a library")
	end := strings.Index(text[start+1:], "\n## ")
	if start < 0 || end < 0 {
		t.Fatal("README has no section Use as a library")
	}
	// Its prose: fenced code blocks would pair the backticks wrongly.
	section := regexp.MustCompile("(?s)```.*?```").ReplaceAllString(text[start:start+1+end], "")
	var users []string // the text of each program that uses the packages as an application
	for _, dir := range []string{"multi", "nodes", "nodes/pidfile", "waiter", "integration/testdata/orchestrator"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if externalRE.Match(src) {
				users = append(users, string(src))
			}
		}
	}
	listed := 0
	for _, m := range tickRE.FindAllStringSubmatch(section, -1) {
		q := qualifiedRE.FindStringSubmatch(m[1])
		if q == nil {
			continue
		}
		listed++
		pkg, name, method := q[1], q[2], q[4]
		used := false
		for _, src := range users {
			switch {
			case method == "":
				used = strings.Contains(src, pkg+"."+name)
			default:
				used = strings.Contains(src, pkg+"."+name) && strings.Contains(src, "."+method+"(")
			}
			if used {
				break
			}
		}
		if !used {
			t.Errorf("README's library section lists %s, which no test of package %s uses as an application would", m[1], libraryDirs[pkg])
		}
	}
	if listed < 20 {
		t.Errorf("README's library section lists %d names; want the public API's", listed)
	}
}
