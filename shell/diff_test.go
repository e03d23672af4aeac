package shell

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/hostfs"
	"github.com/semfs/semfs/memfs"
)

// The differential test: every command of the table runs twice, under
// real bash with GNU grep, findutils, coreutils and tree on a directory on
// disk, and under semfs sh on the same tree loaded into memfs (with and
// without a View) and on the directory itself through hostfs, and stdout
// and exit status must be identical byte for byte.
//
// GNU find, grep -r and du walk directories in readdir order, which on
// most disks is not sorted. Commands marked ordered run on a tmpfs copy
// whose entries were created in reverse name order, which tmpfs returns
// as name order. Everything else runs on a copy on the default temporary
// disk, whose block accounting (4 KiB blocks) semfs reports.

// diffTree is the test tree: path → contents ("" with a trailing slash
// in the name makes an empty directory).
var diffTree = map[string]string{
	"a.txt":                 "hello world\nHello again\nfoo bar baz\nthe end\n",
	"b.txt":                 "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\niota\nkappa\nlambda\nmu\n",
	"empty.txt":             "",
	"nonl.txt":              "first line\nno newline at end",
	"with space.txt":        "spaced file\nhello\n",
	"bin.dat":               "abc\x00def\nhello\nabc again\n",
	"latin1.txt":            "caf\xe9 hello\nplain hello\n",
	"nums.txt":              "10\n2\n33\n-1\n2\n5.5\nabc\n10\n 7\n",
	"words.txt":             "apple banana\ncherry apple\nbanana\napple\n\nfoo_bar foo-bar\npineapple\n",
	"csv.txt":               "name,age,city\nalice,30,paris\nbob,25,berlin\ncarol,35,rome\ndave\n",
	"dup.txt":               "a\na\nb\nc\nc\nc\na\nA\n",
	"ünï.txt":               "café\nnaïve\nCAFÉ\n",
	".hidden":               "secret hello\n",
	"long.txt":              longText(),
	"docs/guide.md":         "# Guide\nhello docs\nSee api.md\n",
	"docs/api.md":           "# API\nGET /users\nPOST /users\nhello api\n",
	"docs/deep/nested/x.md": "deep hello\n",
	"docs/deep/y.go":        "package y\n\nfunc Hello() {}\n",
	"docs/.draft.md":        "hello draft\n",
	"src/main.go":           "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n",
	"src/util.go":           "package main\n\nfunc add(a, b int) int { return a + b }\n",
	"src/README":            "readme hello\n",
	"src/big.txt":           strings.Repeat("0123456789abcdef\n", 300),
	"emptydir/":             "",
}

func longText() string {
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		if i%7 == 0 {
			fmt.Fprintf(&b, "line %d match\n", i)
		} else {
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	return b.String()
}

type diffCase struct {
	cmd     string
	ordered bool // traversal order matters: run GNU on the tmpfs copy
}

func o(cmd string) diffCase { return diffCase{cmd, true} }

var diffCases = []diffCase{
	// ls
	{cmd: "ls"}, {cmd: "ls -a"}, {cmd: "ls -A"}, {cmd: "ls -1"}, {cmd: "ls docs"}, {cmd: "ls -a docs"},
	{cmd: "ls docs src"}, {cmd: "ls a.txt b.txt docs"}, {cmd: "ls -R"}, {cmd: "ls -R docs"}, {cmd: "ls -l"},
	{cmd: "ls -la docs"}, {cmd: "ls -lh src"}, {cmd: "ls -l a.txt 'with space.txt'"}, {cmd: "ls -S"}, {cmd: "ls -Sr src"},
	{cmd: "ls -t"}, {cmd: "ls -lt docs"}, {cmd: "ls -d docs src"}, {cmd: "ls nosuch"}, {cmd: "ls a.txt nosuch"},
	{cmd: "ls -lR docs"}, {cmd: "ls emptydir"}, {cmd: "ls -l emptydir"}, {cmd: "ls -- -x"},
	{cmd: "ls docs/"}, {cmd: "ls -lh"}, {cmd: "ls -r"},
	// cat
	{cmd: "cat a.txt"}, {cmd: "cat -n b.txt"}, {cmd: "cat nonl.txt a.txt"}, {cmd: "cat -n nonl.txt a.txt"},
	{cmd: "cat nosuch a.txt"}, {cmd: "cat docs"}, {cmd: "cat 'with space.txt'"}, {cmd: "cat ünï.txt"},
	{cmd: "cat < a.txt"}, {cmd: "echo hi | cat - a.txt"}, {cmd: "cat empty.txt"},
	// grep
	{cmd: "grep hello a.txt"}, {cmd: "grep -i hello a.txt"}, {cmd: "grep -n hello a.txt b.txt"},
	{cmd: "grep -c hello a.txt b.txt empty.txt"}, {cmd: "grep -v e b.txt"}, {cmd: "grep -w apple words.txt"},
	{cmd: "grep -x apple words.txt"}, {cmd: "grep -o 'an[a-z]' words.txt"}, {cmd: "grep -E 'alpha|beta' b.txt"},
	{cmd: "grep -F 'a.b' a.txt"}, {cmd: "grep 'a.b' a.txt"}, {cmd: "grep -l hello *.txt"}, {cmd: "grep -L hello *.txt"},
	{cmd: "grep -h hello a.txt docs/api.md"}, {cmd: "grep -H hello a.txt"}, {cmd: "grep -m 1 l b.txt"},
	{cmd: "grep -A 1 match long.txt"}, {cmd: "grep -B 2 match long.txt"}, {cmd: "grep -C 1 match long.txt"},
	{cmd: "grep -n -C 3 match long.txt"}, {cmd: "grep -2 '14' long.txt"}, {cmd: "grep -m 2 -A 1 match long.txt"},
	{cmd: "grep zzz a.txt"}, {cmd: "grep hello nosuch"}, {cmd: "grep hello nosuch a.txt"}, {cmd: "grep -s hello nosuch"},
	{cmd: "grep -q hello a.txt"}, {cmd: "grep -- -1 nums.txt"}, {cmd: "grep -e -1 -e 33 nums.txt"},
	{cmd: "grep hello bin.dat"}, {cmd: "grep -c abc bin.dat"}, {cmd: "grep -a hello bin.dat"}, {cmd: "grep -l abc bin.dat"},
	{cmd: "grep hello latin1.txt"}, {cmd: "grep -i café ünï.txt"}, {cmd: "grep '^[0-9]*$' nums.txt"},
	{cmd: "grep -E '^[0-9]{2}$' nums.txt"}, {cmd: "grep '\\(an\\)\\{2\\}' words.txt"}, {cmd: "grep 'foo.bar' words.txt"},
	{cmd: "grep -w 'foo' words.txt"}, {cmd: "grep -ow 'apple' words.txt"}, {cmd: "grep -c '' words.txt"},
	{cmd: "grep '' nonl.txt"}, {cmd: "grep end nonl.txt"}, {cmd: "grep -v '' a.txt"}, {cmd: "grep -n . nonl.txt"},
	{cmd: "grep -vc a b.txt"}, {cmd: "grep -iw HELLO a.txt"}, {cmd: "grep 'a*' dup.txt"}, {cmd: "grep '*' nums.txt"},
	{cmd: "grep -E 'a+' dup.txt"}, {cmd: "grep 'a\\+' dup.txt"}, {cmd: "grep '[[:upper:]]' dup.txt"}, {cmd: "grep hello docs"},
	{cmd: "cat a.txt | grep -n o"}, {cmd: "grep -c hello < a.txt"}, {cmd: "grep -x '' words.txt"},
	o("grep -r hello"), o("grep -r hello ."), o("grep -rn hello docs"), o("grep -rl hello"), o("grep -rL hello"),
	o("grep -rc hello src"), o("grep -r hello docs/"), o("grep -R Hello"), o("grep -r --include='*.md' hello"),
	o("grep -r --exclude='*.md' hello"), o("grep -r --exclude-dir=deep hello docs"), o("grep -rh hello docs"),
	o("grep -ri HELLO src"), o("grep -r hello a.txt"), o("grep -r hello a.txt docs"), o("grep -rw hello ."),
	o("grep -rno 'hel*o' docs"), o("grep -rv e docs"), o("grep -r zzzz"), o("grep -rlZ hello docs | tr '\\0' '\\n'"),
	// find
	o("find"), o("find ."), o("find docs"), o("find docs/"), o("find . -name '*.md'"), o("find . -iname '*.MD'"),
	o("find . -type d"), o("find . -type f -name '*.go'"), o("find . -path '*deep*'"), o("find . -maxdepth 1"),
	o("find . -mindepth 2 -type f"), o("find . -maxdepth 2 -mindepth 2"), o("find . -type f -size 0"),
	o("find . -type f -size +1k"), o("find . -type f -size -2"), o("find . -type f -size 25c"), o("find . ! -name '*.txt'"),
	o("find . -not -type d"), o("find . -name '*.go' -o -name '*.md'"), o("find . -type f \\( -name '*.go' -o -name README \\)"),
	o("find . -name '*.go' -print"), o("find . -name '*.md' -print0 | tr '\\0' '\\n'"), o("find . -empty"),
	o("find . -path ./docs -prune -o -print"), o("find nosuch"), o("find . -name 'with*'"), o("find src docs -name '*.go'"),
	o("find . -newer docs/guide.md -type f"), o("find . -name '*.go' | wc -l"),
	o("find . -type f | sort"), o("find . -name '[ab].txt'"), o("find . -name '*.txt' | xargs grep -l hello"),
	o("find docs -type f | xargs wc -l"), o("find . -name '.*'"),
	// head / tail
	{cmd: "head b.txt"}, {cmd: "head -n 3 b.txt"}, {cmd: "head -3 b.txt"}, {cmd: "head -c 10 b.txt"},
	{cmd: "head -n -10 b.txt"}, {cmd: "head -c -5 a.txt"}, {cmd: "head -n 1 a.txt b.txt"}, {cmd: "head -n 1 nonl.txt"},
	{cmd: "head -n 5 nonl.txt"}, {cmd: "head nosuch"}, {cmd: "tail b.txt"}, {cmd: "tail -n 2 b.txt"},
	{cmd: "tail -2 b.txt"}, {cmd: "tail -n +10 b.txt"}, {cmd: "tail -c 8 b.txt"}, {cmd: "tail -c +70 b.txt"},
	{cmd: "tail -n 1 nonl.txt"}, {cmd: "tail -n 1 a.txt b.txt"}, {cmd: "tail -n 0 a.txt"}, {cmd: "cat b.txt | head -n 2"},
	{cmd: "cat b.txt | tail -n 3"}, {cmd: "head -q -n 1 a.txt b.txt"}, {cmd: "tail -v -n 1 a.txt"},
	// wc
	{cmd: "wc a.txt"}, {cmd: "wc -l a.txt"}, {cmd: "wc -w a.txt b.txt"}, {cmd: "wc -c nonl.txt"}, {cmd: "wc a.txt b.txt empty.txt"},
	{cmd: "wc -l *.txt"}, {cmd: "cat a.txt | wc"}, {cmd: "cat a.txt | wc -l"}, {cmd: "wc -lc src/big.txt a.txt"},
	{cmd: "wc ünï.txt"}, {cmd: "wc -m ünï.txt"}, {cmd: "wc nosuch a.txt"}, {cmd: "wc -l nonl.txt"}, {cmd: "echo a b c | wc -w"},
	// sort / uniq
	{cmd: "sort b.txt"}, {cmd: "sort -r b.txt"}, {cmd: "sort nums.txt"}, {cmd: "sort -n nums.txt"}, {cmd: "sort -rn nums.txt"},
	{cmd: "sort -u dup.txt"}, {cmd: "sort -nu nums.txt"}, {cmd: "sort -t, -k2 csv.txt"}, {cmd: "sort -t, -k2 -n csv.txt"},
	{cmd: "sort -t, -k2,2n csv.txt"}, {cmd: "sort -t, -k3 csv.txt"}, {cmd: "sort -k2 words.txt"}, {cmd: "sort -f dup.txt"},
	{cmd: "sort dup.txt | uniq"}, {cmd: "sort dup.txt | uniq -c"}, {cmd: "uniq dup.txt"}, {cmd: "uniq -c dup.txt"},
	{cmd: "uniq -d dup.txt"}, {cmd: "uniq -u dup.txt"}, {cmd: "sort words.txt | uniq -c | sort -rn"}, {cmd: "sort -t, -k2,2 -r csv.txt"},
	// cut / tr
	{cmd: "cut -d, -f1 csv.txt"}, {cmd: "cut -d, -f2,3 csv.txt"}, {cmd: "cut -d, -f2- csv.txt"}, {cmd: "cut -d, -s -f1 csv.txt"},
	{cmd: "cut -c1-3 b.txt"}, {cmd: "cut -c2,4 a.txt"}, {cmd: "cut -d' ' -f2 a.txt"}, {cmd: "cut -c-2 nums.txt"},
	{cmd: "cut -d, -f1,3 --output-delimiter=: csv.txt"},
	{cmd: "tr a-z A-Z < a.txt"}, {cmd: "cat a.txt | tr -d o"}, {cmd: "cat dup.txt | tr -s 'ac'"}, {cmd: "echo hello | tr el ip"},
	{cmd: "cat a.txt | tr '[:lower:]' '[:upper:]'"}, {cmd: "cat a.txt | tr -s ' ' '\\n'"}, {cmd: "cat b.txt | tr '\\n' ' '"},
	{cmd: "echo abc | tr -c 'a\\n' x"}, {cmd: "cat nums.txt | tr -d '[:digit:]'"},
	// xargs / echo / printf / misc
	{cmd: "echo a b c | xargs -n 1"}, {cmd: "printf 'a\\nb\\n' | xargs -I{} echo [{}]"}, {cmd: "printf 'a\\0b c\\0' | xargs -0 -n 1 echo"},
	{cmd: "echo a.txt b.txt | xargs cat"}, {cmd: "echo a.txt b.txt | xargs wc -l"}, {cmd: "echo \"'with space.txt'\" | xargs cat"},
	{cmd: "echo -n hi; echo"}, {cmd: "echo -e 'a\\tb'"}, {cmd: "printf '%s-%d\\n' x 3"}, {cmd: "basename /a/b/c.txt"},
	{cmd: "basename /a/b/c.txt .txt"}, {cmd: "basename -a x/y z/w/"}, {cmd: "dirname /a/b/c.txt"}, {cmd: "dirname c.txt"},
	{cmd: "dirname /"}, {cmd: "true; echo $?"}, {cmd: "false; echo $?"}, {cmd: "test -f a.txt && echo yes"},
	{cmd: "[ -d docs ] && echo dir"}, {cmd: "test -e nosuch || echo no"}, {cmd: "cd docs && ls && cd deep && ls"},
	{cmd: "cd docs; cat ../a.txt | head -1"}, {cmd: "for f in docs/*.md; do echo $f; done"}, {cmd: "shopt -s globstar; echo docs/**/*.md"},
	{cmd: "echo *.txt"}, {cmd: "x=$(cat a.txt | wc -l); echo lines=$x"}, {cmd: "cat <<EOF\nhere doc\nEOF"},
	{cmd: "i=0; while [ $i -lt 3 ]; do echo $i; i=$((i+1)); done"}, {cmd: "grep -q hello a.txt && echo found || echo none"},
	{cmd: "ls | wc -l"}, {cmd: "cat a.txt b.txt | sort | head -n 3"},
	// tree, stat, du
	{cmd: "tree"}, {cmd: "tree docs"}, {cmd: "tree -a docs"}, {cmd: "tree -d"}, {cmd: "tree -L 1"}, {cmd: "tree -L 2 docs"},
	{cmd: "tree emptydir"}, {cmd: "tree --noreport src"},
	{cmd: "stat -c '%n %s %F %a %A %h %U %G %b %B %Y' a.txt empty.txt docs"}, {cmd: "stat -c '%y' a.txt"},
	{cmd: "stat --printf '%n:%s\\n' b.txt"}, {cmd: "stat nosuch"},
	{cmd: "du -s ."}, {cmd: "du -sh docs"}, {cmd: "du docs | sort"}, {cmd: "du -a src | sort"}, {cmd: "du -s a.txt src/big.txt"},
	{cmd: "du -ah src | sort"}, {cmd: "du -sc docs src"}, {cmd: "du -d 1 docs | sort"}, {cmd: "du -a docs/ | sort"}, {cmd: "tree a.txt"}, {cmd: "du --max-depth=0 src"},
	// more flags and spellings
	{cmd: "grep --count hello a.txt"}, {cmd: "grep --ignore-case --line-number HELLO a.txt"}, {cmd: "grep -y hello a.txt"},
	{cmd: "grep --regexp=beta b.txt"}, {cmd: "grep -e alpha -e mu b.txt"}, {cmd: "grep -c -v -e a -e e b.txt"},
	{cmd: "grep -nA1 -B1 match long.txt"}, {cmd: "grep --max-count=1 --after-context=2 match long.txt"},
	{cmd: "grep -ci 'CAFÉ' ünï.txt"}, {cmd: "grep -E 'x{,2}y' words.txt"}, {cmd: "grep -w -o 'foo' words.txt"},
	{cmd: "grep -x -n 'banana' words.txt"}, {cmd: "grep -lv hello a.txt b.txt"}, {cmd: "grep -Fx apple words.txt"},
	{cmd: "grep -F -e apple -e cherry words.txt"}, {cmd: "grep '[[:digit:]]\\{2\\}' nums.txt"}, {cmd: "grep -E '^(a|b)' b.txt"},
	{cmd: "grep '^a\\|^b' b.txt"}, {cmd: "grep -c '^' nonl.txt"}, {cmd: "grep -o . nonl.txt | head -3"},
	{cmd: "grep -q zzz a.txt; echo $?"}, {cmd: "grep -H -c hello a.txt"}, {cmd: "grep -hn hello a.txt b.txt"},
	o("grep -r -n --include='*.go' -e func -e package"), o("grep -r --exclude='*.txt' --include='*.go' --include='*.md' hello src docs"), o("grep -r --include='*.md' --exclude='g*' hello"), o("grep -rli HELLO docs src"), o("grep -rc '' docs"),
	o("find . -ipath '*DEEP*' -type f"), o("find . -wholename './src/*'"), o("find . -type f,d -name '*e*'"),
	o("find . -name '*.md' -and -not -path '*deep*'"), o("find . -false -or -name README"), o("find . -true -name '*.go'"),
	o("find . -maxdepth 1 -type f -size +1"), o("find docs -mindepth 1 -maxdepth 1"), o("find src -newer src/main.go"),
	o("find . -type d -empty"), o("find . -name '*.txt' -size -1k"), o("find . -iname 'readme'"),
	{cmd: "ls -1a src"}, {cmd: "ls -lS src"}, {cmd: "ls -ltr docs"}, {cmd: "ls -lhS"}, {cmd: "ls -R src docs"},
	{cmd: "ls -ld docs"}, {cmd: "ls -l docs/guide.md docs/api.md"},
	{cmd: "head -c 3 a.txt b.txt"}, {cmd: "head --lines=2 b.txt"}, {cmd: "tail --lines=+11 b.txt"}, {cmd: "tail -c +1 nonl.txt"},
	{cmd: "tail -q -n 1 a.txt b.txt"}, {cmd: "head -n 0 a.txt"}, {cmd: "tail -n +100 b.txt"},
	{cmd: "wc --lines a.txt"}, {cmd: "wc -wl a.txt b.txt"}, {cmd: "wc empty.txt"}, {cmd: "wc -c < a.txt"},
	{cmd: "sort -b -k2 words.txt"}, {cmd: "sort -s -k1,1 dup.txt"}, {cmd: "sort -n -r -u nums.txt"}, {cmd: "sort --reverse b.txt"},
	{cmd: "sort -t, -k2n -k1 csv.txt"}, {cmd: "sort -k1.2,1.3 b.txt"}, {cmd: "uniq -i dup.txt"}, {cmd: "uniq -ci dup.txt"},
	{cmd: "cut -b 1-2 b.txt"}, {cmd: "cut -f 1 words.txt"}, {cmd: "cut -d ' ' -f 1,2 -s words.txt"}, {cmd: "cut -c 3- nums.txt"},
	{cmd: "echo aabbcc | tr -s a-c"}, {cmd: "echo hello | tr -d -c 'l\n'"}, {cmd: "echo 'a b' | tr ' ' '\t'"},
	{cmd: "echo abc | tr 'a-c' 'A'"}, {cmd: "cat csv.txt | tr , ';'"},
	{cmd: "echo 1 2 3 4 5 | xargs -n 2 echo"}, {cmd: "printf 'x\ny\n' | xargs -I % echo item-%"}, {cmd: "echo | xargs echo empty"},
	{cmd: "printf 'a b\n' | xargs -d '\n' echo"}, {cmd: "cat csv.txt | cut -d, -f1 | sort -r | head -2"},
	{cmd: "stat -c '%n|%F|%s' emptydir src/README"}, {cmd: "stat -c '%A %a' docs/api.md"}, {cmd: "stat -c '%h' docs src emptydir"},
	{cmd: "basename docs/deep/"}, {cmd: "basename -s .md docs/api.md docs/guide.md"}, {cmd: "dirname docs/deep/y.go a.txt"},
	{cmd: "tree -a src"}, {cmd: "tree -d docs"}, {cmd: "tree -L 1 docs src"},
	{cmd: "grep -A1 hello a.txt docs/api.md docs/guide.md"}, {cmd: "grep -B1 -n hello a.txt words.txt docs/guide.md"},
	{cmd: "grep -C1 -c match long.txt a.txt"}, {cmd: "grep -A2 -v e b.txt"}, o("grep -r -B1 hello docs"),
	{cmd: "grep -n -A1 'line 2' long.txt"}, {cmd: "grep -m1 -c hello a.txt words.txt"},
}

// writeDisk writes the tree below dir with the modification times of
// the memfs copy, creating each directory's entries in reverse name order
// (so that tmpfs lists them in name order).
func writeDisk(t *testing.T, dir string, mem semfs.FS) {
	t.Helper()
	ctx := context.Background()
	var dirs []string
	var walk func(p string)
	walk = func(p string) {
		ents, err := mem.ReadDir(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		for i := len(ents) - 1; i >= 0; i-- {
			e := ents[i]
			cp := semfs.Join(p, e.Name())
			host := filepath.Join(dir, filepath.FromSlash(cp))
			if e.IsDir() {
				if err := os.Mkdir(host, 0o755); err != nil {
					t.Fatal(err)
				}
				dirs = append(dirs, cp)
				walk(cp)
				continue
			}
			data, err := semfs.ReadFile(ctx, mem, cp)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(host, data, 0o644); err != nil {
				t.Fatal(err)
			}
			info, _ := mem.Stat(ctx, cp)
			os.Chtimes(host, info.ModTime(), info.ModTime())
		}
	}
	walk("/")
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range append(dirs, "/") {
		info, _ := mem.Stat(ctx, d)
		os.Chtimes(filepath.Join(dir, filepath.FromSlash(d)), info.ModTime(), info.ModTime())
	}
}

// loadMem builds the memfs copy of a path → contents map, in name order
// and a few milliseconds apart, so that modification times differ.
func loadMem(t testing.TB, files map[string]string) *memfs.FS {
	ctx := context.Background()
	mem := memfs.New()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		var err error
		if strings.HasSuffix(n, "/") {
			err = semfs.MkdirAll(ctx, mem, strings.TrimSuffix(n, "/"), 0o755)
		} else {
			err = semfs.WriteFile(ctx, mem, n, []byte(files[n]), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return mem
}

func requireGNU(t *testing.T) {
	for _, tool := range []string{"bash", "grep", "find"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("differential test needs %s on PATH", tool)
		}
	}
}

func TestDifferentialGNU(t *testing.T) {
	requireGNU(t)
	// tree(1) is not part of a minimal Debian: without it its rows are
	// left out (and said so); scripts/deps.sh should install it.
	_, treeErr := exec.LookPath("tree")
	if treeErr != nil {
		t.Logf("tree is not installed (apt-get install tree): its rows are not compared")
	}
	mem := loadMem(t, diffTree)
	disk := t.TempDir()
	writeDisk(t, disk, mem)
	// Where the ordered copy does not list in name order (no tmpfs), the
	// ordered rows compare sorted lines instead, and say so.
	ordered, sortOrdered := orderedDisk(t, "semfs-diff-", mem)
	if sortOrdered {
		t.Logf("%s does not list directories in name order: traversal rows compare sorted lines", ordered)
	}
	// The same directories seen through hostfs (read-only), so the host
	// backend runs the table too.
	hosts := map[string]semfs.FS{}
	for _, d := range []string{disk, ordered} {
		h, err := hostfs.Open(d, hostfs.ReadOnly)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		hosts[d] = h.Tree()
	}
	tree, err := NewTree(context.Background(), mem)
	if err != nil {
		t.Fatal(err)
	}
	view := tree.View(semfs.Principal{})
	compared := 0
	for _, tc := range diffCases {
		if treeErr != nil && strings.HasPrefix(tc.cmd, "tree") {
			continue
		}
		compared++
		dir := disk
		if tc.ordered {
			dir = ordered
		}
		gnuOut, gnuErr, gnuCode := runGNU(t, dir, tc.cmd)
		for _, mode := range []struct {
			name string
			fsys semfs.FS
			opts Options
		}{{"memfs", mem, Options{}}, {"view", mem, Options{View: view}}, {"hostfs", hosts[dir], Options{}}} {
			s := New(mode.fsys, mode.opts)
			var out, errb bytes.Buffer
			code, _ := s.Run(context.Background(), tc.cmd, nil, &out, &errb)
			got, want := out.String(), gnuOut
			if tc.ordered && sortOrdered {
				got, want = sortLines(got), sortLines(want)
			}
			if got != want || code != gnuCode {
				t.Errorf("%s [%s]:\n--- GNU (exit %d)\n%s%s--- semfs (exit %d)\n%s%s", tc.cmd, mode.name, gnuCode, gnuOut, indentErr(gnuErr), code, out.String(), indentErr(errb.String()))
			}
		}
	}
	if compared < 300 {
		t.Fatalf("only %d commands were compared; the table should hold 300+", compared)
	}
}

// listsInNameOrder reports whether every directory below dir returns its
// entries from readdir in name order.
func listsInNameOrder(t *testing.T, dir string) bool {
	ok := true
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		names, _ := f.Readdirnames(-1)
		if !sort.StringsAreSorted(names) {
			ok = false
		}
		return nil
	})
	return ok
}

func sortLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	sort.Strings(lines)
	return strings.Join(lines, "")
}

func indentErr(s string) string {
	if s == "" {
		return ""
	}
	return "  stderr: " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  stderr: ") + "\n"
}

// TestDifferentialTimes compares ls -l, ls -t and find -newer on files
// with old, recent and future modification times, through hostfs (memfs
// cannot set times).
func TestDifferentialTimes(t *testing.T) {
	requireGNU(t)
	dir := t.TempDir()
	now := time.Now()
	for name, mod := range map[string]time.Time{
		"old.txt":    now.AddDate(-3, 0, 0),
		"recent.txt": now.Add(-time.Hour),
		"edge.txt":   now.AddDate(0, -5, -25),
		"future.txt": now.AddDate(1, 0, 0),
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, mod, mod)
	}
	h, err := hostfs.Open(dir, hostfs.ReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, script := range []string{"ls -l", "ls -lt", "ls -ltr", "ls -t", "find . -newer recent.txt | sort", "stat -c '%n %Y' old.txt future.txt"} {
		want, gnuErr, gnuCode := runGNU(t, dir, script)
		if gnuCode != 0 {
			t.Fatalf("%s: GNU exit %d: %s", script, gnuCode, gnuErr)
		}
		out, stderr, code := run(t, New(h.Tree(), Options{}), script)
		if out != want || code != 0 {
			t.Errorf("%s:\n--- GNU\n%s--- semfs (exit %d)\n%s%s", script, want, code, out, stderr)
		}
	}
}

// orderedDisk writes mem to a host directory that lists in name order
// where it can (tmpfs, as GNU find and grep -r walk in directory order),
// else to a test directory, and reports whether output must be compared
// as sorted lines because the directory's order is not by name.
func orderedDisk(t *testing.T, prefix string, mem semfs.FS) (dir string, sorted bool) {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", prefix)
	if err != nil {
		dir = t.TempDir()
	} else {
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	writeDisk(t, dir, mem)
	return dir, !listsInNameOrder(t, dir)
}

// runGNU runs script with bash in dir, in gnuEnv, and returns what it
// wrote and its exit code (failing the test if bash cannot be run).
func runGNU(t *testing.T, dir, script string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir, cmd.Env = dir, gnuEnv()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("%s: %v", script, err)
		}
		code = ee.ExitCode()
	}
	return out.String(), errb.String(), code
}

// gnuEnv is the environment of the GNU side: the C.UTF-8 locale (byte
// order, UTF-8 names) and this process's time zone, which semfs uses.
func gnuEnv() []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C.UTF-8", "HOME=/"}
	if tz, ok := os.LookupEnv("TZ"); ok {
		env = append(env, "TZ="+tz)
	}
	return env
}
