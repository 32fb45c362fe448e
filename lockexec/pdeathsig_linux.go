package lockexec

import "syscall"

// setPdeathsig makes the kernel SIGKILL the direct child when the thread
// that started it dies (see startChild for why that thread lives long
// enough), so a SIGKILLed zklock does not leave the command running
// without the lock.
func setPdeathsig(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
