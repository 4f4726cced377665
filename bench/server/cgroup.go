package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cpuGroup is a cgroup of its own holding the server and every process it
// starts from then on, so its CPU counts what /proc/PID/stat's children's
// times miss: the processes in bubblewrap's PID namespace, which the
// outer bubblewrap does not wait for. It needs cgroup v2, or v1's cpuacct
// hierarchy, and the right to create a group there (root).
type cpuGroup struct {
	dir string
	v2  bool
}

// newCPUGroup creates the group and moves process pid into it.
func newCPUGroup(pid int) (*cpuGroup, error) {
	g := &cpuGroup{}
	switch {
	case exists("/sys/fs/cgroup/cgroup.controllers"):
		g.dir, g.v2 = fmt.Sprintf("/sys/fs/cgroup/rein-bench-%d", pid), true
	case exists("/sys/fs/cgroup/cpuacct/cpuacct.usage"):
		g.dir = fmt.Sprintf("/sys/fs/cgroup/cpuacct/rein-bench-%d", pid)
	default:
		return nil, errors.New("no cgroup v2 and no cpuacct hierarchy under /sys/fs/cgroup")
	}
	if err := os.Mkdir(g.dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(g.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		g.remove()
		return nil, err
	}
	return g, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// usage is the CPU time (user and system) the group's processes have used.
func (g *cpuGroup) usage() (time.Duration, error) {
	if !g.v2 {
		b, err := os.ReadFile(filepath.Join(g.dir, "cpuacct.usage"))
		if err != nil {
			return 0, err
		}
		ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return time.Duration(ns), err
	}
	b, err := os.ReadFile(filepath.Join(g.dir, "cpu.stat"))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
			us, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return time.Duration(us) * time.Microsecond, err
		}
	}
	return 0, fmt.Errorf("%s/cpu.stat: no usage_usec", g.dir)
}

// remove deletes the group once its processes ended.
func (g *cpuGroup) remove() {
	if g != nil {
		_ = os.Remove(g.dir)
	}
}
