package zktest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// KDC is a throwaway MIT Kerberos KDC (Debian's krb5-kdc, krb5-admin-server
// and krb5-user) on a loopback port, with its own realm, database and
// configuration in a temporary directory. Nothing of the machine's own
// Kerberos set-up is read or changed: every tool runs with KRB5_CONFIG and
// KRB5_KDC_PROFILE pointing into Dir.
type KDC struct {
	Realm    string
	Dir      string
	Port     int
	Krb5Conf string // the clients' krb5.conf
	kdcConf  string
	proc     *process
}

// kdcTools are the programs StartKDC needs; scripts/install-deps.sh
// installs them.
var kdcTools = []string{"kdb5_util", "krb5kdc", "kadmin.local", "kinit"}

// StartKDC creates a realm in dir and starts its KDC. The caller stops it
// with Stop.
func StartKDC(ctx context.Context, dir, realm string) (*KDC, error) {
	for _, tool := range kdcTools {
		if _, err := lookTool(tool); err != nil {
			return nil, fmt.Errorf("zktest: %s not found (run scripts/install-deps.sh): %w", tool, err)
		}
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	k := &KDC{Realm: realm, Dir: dir, Port: ports[0],
		Krb5Conf: filepath.Join(dir, "krb5.conf"), kdcConf: filepath.Join(dir, "kdc.conf")}
	addr := "127.0.0.1:" + strconv.Itoa(k.Port)
	if err := k.writeConfig(addr); err != nil {
		return nil, err
	}
	if err := k.tool(ctx, "kdb5_util", "create", "-s", "-r", realm, "-P", "zktest-master-key"); err != nil {
		return nil, err
	}
	if err := k.serve(ctx, addr); err != nil {
		return nil, err
	}
	return k, nil
}

func lookTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	// /usr/sbin is not on every user's PATH.
	p := filepath.Join("/usr/sbin", name)
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	return "", exec.ErrNotFound
}

// env is the environment of the realm's tools: this realm's files only.
func (k *KDC) env() []string {
	return append(os.Environ(), "KRB5_CONFIG="+k.Krb5Conf, "KRB5_KDC_PROFILE="+k.kdcConf,
		"PATH="+os.Getenv("PATH")+":/usr/sbin")
}

// Env is what a client of the realm needs in its environment.
func (k *KDC) Env() []string { return []string{"KRB5_CONFIG=" + k.Krb5Conf} }

func (k *KDC) tool(ctx context.Context, name string, args ...string) error {
	p, err := lookTool(name)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, p, args...)
	cmd.Env = k.env()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("zktest: %s %s: %w: %s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

// AddPrincipal adds a principal with a random key.
func (k *KDC) AddPrincipal(ctx context.Context, name string) error {
	return k.tool(ctx, "kadmin.local", "-r", k.Realm, "-q", "addprinc -randkey "+name)
}

// Keytab exports the principals' current keys into a keytab file in Dir
// and returns its path.
func (k *KDC) Keytab(ctx context.Context, file string, principals ...string) (string, error) {
	p := filepath.Join(k.Dir, file)
	for _, pr := range principals {
		if err := k.tool(ctx, "kadmin.local", "-r", k.Realm, "-q", "ktadd -norandkey -k "+p+" "+pr); err != nil {
			return "", err
		}
	}
	return p, nil
}

// ChangeKey gives a principal a new random key, so keytabs exported
// before hold a wrong one.
func (k *KDC) ChangeKey(ctx context.Context, principal string) error {
	return k.tool(ctx, "kadmin.local", "-r", k.Realm, "-q", "cpw -randkey "+principal)
}

// Kinit fills the ticket cache ccache with a TGT for principal, from keytab.
func (k *KDC) Kinit(ctx context.Context, ccache, principal, keytab string) error {
	return k.KinitFor(ctx, ccache, principal, keytab, 0)
}

// KinitFor is Kinit with a ticket that lasts the given time; 0 asks for
// the realm's default.
func (k *KDC) KinitFor(ctx context.Context, ccache, principal, keytab string, life time.Duration) error {
	args := []string{"-c", ccache, "-k", "-t", keytab}
	if life > 0 {
		args = append(args, "-l", strconv.Itoa(int(life.Seconds()))+"s")
	}
	return k.tool(ctx, "kinit", append(args, principal)...)
}

// Stop ends the KDC and waits for it.
func (k *KDC) Stop() error {
	if k.proc == nil {
		return nil
	}
	if err := k.proc.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	<-k.proc.done
	return nil
}

// WriteKrb5ServerJAAS writes, in dir, a server JAAS file whose Server
// section logs ZooKeeper in as principal from keytab, and returns its path.
func WriteKrb5ServerJAAS(dir, principal, keytab string) (string, error) {
	return writeJAAS(dir, "server-krb5.jaas", Krb5KeytabJAAS("Server", principal, keytab))
}

// Krb5KeytabJAAS is a JAAS section logging in as principal from keytab
// with Krb5LoginModule, as servers and Java clients write it.
func Krb5KeytabJAAS(section, principal, keytab string) string {
	return fmt.Sprintf(`%s {
  com.sun.security.auth.module.Krb5LoginModule required
  useKeyTab=true
  keyTab=%q
  storeKey=true
  useTicketCache=false
  principal=%q;
};
`, section, keytab, principal)
}

// JVMFlags are what a JVM needs to use the realm.
func (k *KDC) JVMFlags() []string {
	return []string{"-Djava.security.krb5.conf=" + k.Krb5Conf}
}

// writeConfig writes the realm's krb5.conf, for clients and tools, and the
// KDC's own kdc.conf, both naming addr as the one KDC.
func (k *KDC) writeConfig(addr string) error {
	// rdns and dns_canonicalize_hostname off: service principals are
	// named by the host exactly as the client wrote it, in every client
	// (MIT, Java, gokrb5). udp_preference_limit=1: TCP only, one port.
	krb5 := fmt.Sprintf(`[libdefaults]
  default_realm = %[1]s
  dns_lookup_kdc = false
  dns_lookup_realm = false
  dns_canonicalize_hostname = false
  rdns = false
  udp_preference_limit = 1
  ticket_lifetime = 1h
  forwardable = false
[realms]
  %[1]s = {
    kdc = %[2]s
  }
[domain_realm]
  localhost = %[1]s
  127.0.0.1 = %[1]s
`, k.Realm, addr)
	kdc := fmt.Sprintf(`[kdcdefaults]
  kdc_listen = %[3]s
  kdc_tcp_listen = %[3]s
[realms]
  %[1]s = {
    database_name = %[2]s/principal
    key_stash_file = %[2]s/stash
    acl_file = %[2]s/kadm5.acl
    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
    max_life = 1h
  }
[logging]
  kdc = FILE:%[2]s/kdc.log
`, k.Realm, k.Dir, addr)
	for name, text := range map[string]string{k.Krb5Conf: krb5, k.kdcConf: kdc, filepath.Join(k.Dir, "kadm5.acl"): ""} {
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// serve starts krb5kdc and returns once its TCP port accepts.
func (k *KDC) serve(ctx context.Context, addr string) error {
	cmd := exec.Command("krb5kdc", "-n", "-r", k.Realm)
	cmd.Env = k.env()
	log, err := os.Create(filepath.Join(k.Dir, "krb5kdc.out"))
	if err != nil {
		return err
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if err := startCmd(cmd); err != nil {
		return fmt.Errorf("zktest: start krb5kdc: %w", err)
	}
	k.proc = &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		k.proc.err = cmd.Wait()
		close(k.proc.done)
	}()
	// Serving once the TCP port accepts.
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if k.proc.exited() {
			out, _ := os.ReadFile(log.Name())
			return fmt.Errorf("zktest: krb5kdc exited: %v: %s", k.proc.err, out)
		}
		select {
		case <-ctx.Done():
			k.Stop()
			return fmt.Errorf("zktest: krb5kdc not serving on %s: %w", addr, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
