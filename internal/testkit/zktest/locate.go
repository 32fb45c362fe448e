package zktest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/zklock/zklock/internal/testkit/javart"
)

// mainClass is the entry point used for every server. QuorumPeerMain runs
// standalone when the config has no server.N lines, so one class serves both
// StartStandalone and StartEnsemble.
const mainClass = "org.apache.zookeeper.server.quorum.QuorumPeerMain"

// Install says how to run ZooKeeper: which java binary and which classpath.
type Install struct {
	// Java is the path of the java binary.
	Java string
	// Classpath lists jars (and directories) in order.
	Classpath []string
	// Source describes where the jars came from, for error messages.
	Source string
}

// Locate finds a Java runtime and the ZooKeeper jars. ZOOKEEPER_HOME, when
// set, takes precedence over the Debian layout. The error names what is
// missing and where it was looked for.
func Locate() (*Install, error) {
	java, err := javart.Java()
	if err != nil {
		return nil, fmt.Errorf("zktest: %w; install a JRE (e.g. apt-get install default-jre-headless) or set JAVA_HOME", err)
	}
	var cp []string
	var src string
	if home := os.Getenv("ZOOKEEPER_HOME"); home != "" {
		cp, err = homeClasspath(home)
		src = "ZOOKEEPER_HOME=" + home
	} else {
		cp, err = debianClasspath(javart.DebianDir)
		src = javart.DebianDir
	}
	if err != nil {
		return nil, err
	}
	return &Install{Java: java, Classpath: cp, Source: src}, nil
}

// homeClasspath builds the classpath of an Apache release tarball the way
// bin/zkServer.sh does: conf/ (for its logback.xml), the server jar(s) at
// the top level, then lib/*.jar.
func homeClasspath(home string) ([]string, error) {
	var cp []string
	if fi, err := os.Stat(filepath.Join(home, "conf")); err == nil && fi.IsDir() {
		cp = append(cp, filepath.Join(home, "conf"))
	}
	top, _ := filepath.Glob(filepath.Join(home, "*.jar"))
	lib, _ := filepath.Glob(filepath.Join(home, "lib", "*.jar"))
	sort.Strings(top)
	sort.Strings(lib)
	cp = append(cp, top...)
	cp = append(cp, lib...)
	found := false
	for _, j := range append(top, lib...) {
		b := filepath.Base(j)
		if strings.HasPrefix(b, "zookeeper-") && !strings.HasPrefix(b, "zookeeper-jute") &&
			!strings.Contains(b, "prometheus") {
			found = true
			break
		}
	}
	if !found {
		return nil, fmt.Errorf("zktest: ZOOKEEPER_HOME=%s has no zookeeper-*.jar in %s or %s (expected an Apache release layout)",
			home, home, filepath.Join(home, "lib"))
	}
	return cp, nil
}

func debianClasspath(dir string) ([]string, error) {
	var cp, missing []string
	for _, name := range javart.ServerJars() {
		p := filepath.Join(dir, name+".jar")
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
			continue
		}
		cp = append(cp, p)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("zktest: ZooKeeper jars not found: %s; install Debian's zookeeper package (apt-get install zookeeper) or set ZOOKEEPER_HOME to an Apache ZooKeeper release",
			strings.Join(missing, ", "))
	}
	return cp, nil
}

// errNoInstall is returned when an Options.Install is given but unusable.
var errNoInstall = errors.New("zktest: Options.Install has no Java binary or classpath")
