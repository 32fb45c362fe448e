package zktest

import (
	"os/exec"
	"runtime"
	"sync"
)

// Every JVM is started from one dedicated goroutine that locks itself to
// its OS thread and never unlocks or returns.
//
// Why: on Linux the JVMs get Pdeathsig=SIGKILL so that a test binary that
// is killed (timeout, ^C, crash) takes its servers with it. But the kernel
// delivers the parent-death signal when the *thread* that forked the child
// exits, not the process. The Go runtime may terminate a thread, for
// example when a goroutine that locked it exits without unlocking, which
// would kill a healthy server in the middle of a test. A thread that is
// locked for the life of the process is never reused or terminated, so it
// is a safe parent for every server.
var spawner struct {
	once sync.Once
	reqs chan spawnReq
}

type spawnReq struct {
	cmd  *exec.Cmd
	errc chan error
}

// startCmd starts cmd from the spawner thread, with the parent-death signal
// set where the platform supports it.
func startCmd(cmd *exec.Cmd) error {
	setParentDeathSignal(cmd)
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnReq)
		go spawnLoop(spawner.reqs)
	})
	errc := make(chan error, 1)
	spawner.reqs <- spawnReq{cmd: cmd, errc: errc}
	return <-errc
}

func spawnLoop(reqs <-chan spawnReq) {
	runtime.LockOSThread() // deliberately never unlocked; see above
	for r := range reqs {
		r.errc <- r.cmd.Start()
	}
}
