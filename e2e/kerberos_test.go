package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

const testRealm = "ZKLOCK.TEST"

// kerberized is a throwaway realm and a ZooKeeper that demands SASL and
// logs in with Krb5LoginModule from its own keytab.
type kerberized struct {
	kdc     *zktest.KDC
	zk      *zktest.Cluster
	keytab  string // alice's keytab
	servers string
}

func startKerberized(t *testing.T) *kerberized {
	t.Helper()
	zktest.NeedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kdc, err := zktest.StartKDC(ctx, t.TempDir(), testRealm)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kdc.Stop() })
	// The server is named by the host the client connects to, as written
	// in the connect string the client's dialer sees.
	service := "zookeeper/127.0.0.1@" + testRealm
	for _, p := range []string{service, "other/127.0.0.1", "alice", "bob"} {
		if err := kdc.AddPrincipal(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	serverKeytab, err := kdc.Keytab(ctx, "zookeeper.keytab", service)
	if err != nil {
		t.Fatal(err)
	}
	keytab, err := kdc.Keytab(ctx, "alice.keytab", "alice")
	if err != nil {
		t.Fatal(err)
	}
	jaas, err := zktest.WriteKrb5ServerJAAS(kdc.Dir, service, serverKeytab)
	if err != nil {
		t.Fatal(err)
	}
	c := startSASLServer(t, zktest.SASLOptions(jaas, kdc.JVMFlags()...))
	return &kerberized{kdc: kdc, zk: c, keytab: keytab, servers: "--servers=" + c.ConnectString()}
}

func keytabJAAS(t *testing.T, principal, keytab string) string {
	return writeFile(t, "client.jaas", zktest.Krb5KeytabJAAS("Client", principal, keytab))
}

// TestKerberos: against a real MIT KDC and a ZooKeeper that demands SASL
// and logs in with Krb5LoginModule, zklock logs in with GSSAPI from a
// keytab JAAS file, from a ticket cache filled by kinit (KRB5CCNAME), and
// from the --sasl gssapi flags. A server that cannot accept the ticket
// (another service's) refuses: 77, naming GSSAPI and the principal. A
// keytab whose key the KDC changed is refused: 77. No KDC: 69.
func TestKerberos(t *testing.T) {
	k := startKerberized(t)
	env := k.kdc.Env()

	code, out, errs := runZklock(t, env, k.servers, "--jaas", keytabJAAS(t, "alice@"+testRealm, k.keytab), "run", "--path", "/locks/k", "--", "echo", "ran")
	if code != 0 || out != "ran\n" {
		t.Errorf("keytab JAAS: exit %d, stdout %q, stderr %q", code, out, errs)
	}

	ccache := filepath.Join(t.TempDir(), "ccache")
	if err := k.kdc.Kinit(t.Context(), ccache, "alice", k.keytab); err != nil {
		t.Fatal(err)
	}
	cacheJAAS := writeFile(t, "cache.jaas", `Client { com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true; };`)
	code, out, errs = runZklock(t, append(env, "KRB5CCNAME=FILE:"+ccache), k.servers, "--jaas", cacheJAAS, "run", "--path", "/locks/k", "--", "echo", "ran")
	if code != 0 || out != "ran\n" {
		t.Errorf("ticket cache: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = runZklock(t, append(env, "KRB5CCNAME="+ccache), k.servers, "--sasl", "gssapi", "run", "--path", "/locks/k", "--", "echo", "ran")
	if code != 0 || out != "ran\n" {
		t.Errorf("--sasl gssapi from the ticket cache: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = runZklock(t, env, k.servers, "--sasl", "gssapi", "--sasl-principal", "alice", "--keytab", k.keytab, "run", "--path", "/locks/k", "--", "echo", "ran")
	if code != 0 || out != "ran\n" {
		t.Errorf("--sasl gssapi --keytab: exit %d, stdout %q, stderr %q", code, out, errs)
	}

	// An expired ticket cache: kinit for 2 s, then wait until the ticket
	// is past its end. zklock cannot renew it without a key: 77, naming
	// the principal, and nothing is run.
	expired := filepath.Join(t.TempDir(), "expired")
	if err := k.kdc.KinitFor(t.Context(), expired, "alice", k.keytab, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	zktest.Eventually(t, 10*time.Second, "the ticket to expire", func() bool {
		// klist -s: exit status only, non-zero once no ticket is valid.
		return exec.Command("klist", "-s", "-c", "FILE:"+expired).Run() != nil
	})
	code, out, errs = runZklock(t, append(env, "KRB5CCNAME=FILE:"+expired), k.servers, "--jaas", cacheJAAS, "run", "--path", "/locks/k", "--", "echo", "ran")
	if code != 77 || out != "" {
		t.Errorf("an expired ticket cache: exit %d, stdout %q, want 77 and nothing run", code, out)
	}
	t.Logf("an expired ticket cache: %s", errs)
	oneLine(t, "an expired ticket cache", errs, "GSSAPI", "alice")

	// A ticket for another service: the server has no key for it.
	code, _, errs = runZklock(t, env, k.servers, "--sasl", "gssapi", "--sasl-principal", "alice", "--keytab", k.keytab, "--sasl-service", "other", "run", "--path", "/locks/k", "--", "true")
	if code != 77 {
		t.Errorf("a ticket the server cannot accept: exit %d, want 77", code)
	}
	t.Logf("a ticket the server cannot accept: %s", errs)
	oneLine(t, "a ticket the server cannot accept", errs, "GSSAPI", `"alice"`, "refused")

	// bob's keytab is stale: the KDC has changed his key since.
	stale, err := k.kdc.Keytab(t.Context(), "bob.keytab", "bob")
	if err != nil {
		t.Fatal(err)
	}
	if err := k.kdc.ChangeKey(t.Context(), "bob"); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runZklock(t, env, k.servers, "--jaas", keytabJAAS(t, "bob", stale), "run", "--path", "/locks/k", "--", "true")
	if code != 77 {
		t.Errorf("a stale keytab: exit %d, want 77", code)
	}
	t.Logf("a stale keytab: %s", errs)
	oneLine(t, "a stale keytab", errs, "GSSAPI", `"bob"`, "refused")

	// No KDC: a krb5.conf naming a port nobody listens on.
	conf, err := os.ReadFile(k.kdc.Krb5Conf)
	if err != nil {
		t.Fatal(err)
	}
	deadConf := writeFile(t, "krb5.conf", strings.ReplaceAll(string(conf), ":"+strconv.Itoa(k.kdc.Port), ":1"))
	code, _, errs = runZklock(t, []string{"KRB5_CONFIG=" + deadConf}, k.servers, "--jaas", keytabJAAS(t, "alice", k.keytab), "run", "--path", "/locks/k", "--", "true")
	if code != 69 {
		t.Errorf("no KDC: exit %d, want 69", code)
	}
	t.Logf("no KDC: %s", errs)
	oneLine(t, "no KDC", errs, "GSSAPI", "no Kerberos KDC reachable")
}
