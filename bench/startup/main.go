// Command startup measures what rein costs before it does anything (issue 9):
// the binary's size, and the peak RSS and CPU time of `rein --version` and of
// the README's quickstart, a replayed agent run with tool calls
// (examples/quickstart.cassette).
//
//	go run ./bench/startup [-n 20] [-bin PATH]
//
// It builds rein twice — `go build` as a developer does, and the release
// build of scripts/build (CGO_ENABLED=0, -trimpath, -ldflags '-s -w') — or
// takes -bin, and runs each command -n times with a fresh HOME, reading the
// child's peak RSS (ru_maxrss) and user+system CPU from wait4. It prints the
// median, min and max of each.
//
// Peak RSS counts the binary's pages the process touched, and the kernel
// maps a file's pages around each fault in blocks as large as the page
// cache holds them: a binary just written by the linker (through mmap) shows
// more than the same bytes written by cp. Every binary is therefore copied
// to a new file before it is measured, and runs once untimed so its pages
// are in the page cache.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("n", 20, "runs of each command")
	bin := flag.String("bin", "", "measure this binary instead of building rein")
	flag.Parse()
	if err := run(*n, *bin); err != nil {
		fmt.Fprintln(os.Stderr, "startup:", err)
		os.Exit(1)
	}
}

// build is one binary to measure.
type build struct {
	name string
	path string
}

func run(n int, bin string) error {
	if n < 1 {
		return fmt.Errorf("-n %d: want at least one run", n)
	}
	if _, err := os.Stat("examples/quickstart.cassette"); err != nil {
		return fmt.Errorf("run from the repository's root: %w", err)
	}
	dir, err := os.MkdirTemp("", "rein-startup-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var builds []build
	if bin != "" {
		builds = append(builds, build{"-bin", bin})
	} else {
		dev := filepath.Join(dir, "rein-dev")
		if err := goBuild(nil, dev); err != nil {
			return err
		}
		rel := filepath.Join(dir, "rein-release")
		if err := goBuild([]string{"CGO_ENABLED=0"}, rel, "-trimpath", "-ldflags=-s -w"); err != nil {
			return err
		}
		builds = append(builds, build{"go build", dev}, build{"release (scripts/build)", rel})
	}
	fmt.Printf("%-26s %9s  %-12s %22s %18s\n", "binary", "size", "command", "peak RSS MiB med (min–max)", "CPU ms med (min–max)")
	for _, b := range builds {
		fresh := filepath.Join(dir, "rein")
		if err := copyFile(b.path, fresh); err != nil {
			return err
		}
		st, err := os.Stat(fresh)
		if err != nil {
			return err
		}
		cmds := []struct {
			name string
			args []string
		}{
			{"--version", []string{"--version"}},
			{"quickstart", []string{"run", "--model", "replay:examples/quickstart.cassette",
				"What is in examples/quickstart, and what does its greeting say?"}},
		}
		for _, c := range cmds {
			var rss, cpu []float64
			for i := range n + 1 {
				r, u, err := measure(fresh, dir, c.args)
				if err != nil {
					return fmt.Errorf("%s %s: %w", b.name, c.name, err)
				}
				if i > 0 { // the first run loads the page cache
					rss, cpu = append(rss, r), append(cpu, u)
				}
			}
			fmt.Printf("%-26s %7.1f MB  %-12s %10.1f (%.1f–%.1f) %10.1f (%.1f–%.1f)\n", b.name, float64(st.Size())/1e6, c.name,
				median(rss), slices.Min(rss), slices.Max(rss), median(cpu), slices.Min(cpu), slices.Max(cpu))
		}
		if err := os.Remove(fresh); err != nil {
			return err
		}
	}
	return nil
}

// goBuild builds ./cmd/rein to out with the extra environment and flags.
func goBuild(env []string, out string, flags ...string) error {
	args := append([]string{"build", "-o", out}, flags...)
	cmd := exec.Command("go", append(args, "./cmd/rein")...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %w", strings.Join(cmd.Args[1:], " "), err)
	}
	return nil
}

// measure runs bin with args and a fresh HOME under dir and returns its
// peak RSS in MiB and its CPU time in milliseconds.
func measure(bin, dir string, args []string) (rss, cpu float64, err error) {
	home, err := os.MkdirTemp(dir, "home-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(home)
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "NO_COLOR=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, 0, fmt.Errorf("%w\n%s", err, out)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0, fmt.Errorf("no resource usage on this system")
	}
	ms := func(tv syscall.Timeval) float64 { return float64(time.Duration(tv.Nano())) / 1e6 }
	return float64(ru.Maxrss) / 1024, ms(ru.Utime) + ms(ru.Stime), nil
}

// copyFile writes a new file at dst with src's bytes and mode.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	_ = os.Remove(dst)
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// median of a non-empty slice.
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
