package cmd

import (
	"sync"

	"github.com/zklock/zklock/internal/runner"
)

// environment documents the variables zklock reads: zklock --help's list
// and the table in docs/guide/configuration.md are rendered from it
// (TestDocTables), and every variable a setting reads must be here
// (TestEnvironmentDocumented). A name may be several that go together,
// separated by ", ".
var environment = []reference{
	{envConfig, "the one configuration file to read, instead of the user's and the system's"},
	{envServers, "default for `--servers`"},
	{envAuth, "default for `--auth`; removed from the command's environment"},
	{envAuthFile, "default for `--auth-file`"},
	{envJAAS, "default for `--jaas`"},
	{envSASLPassword, "the password for `--sasl digest`; removed from the command's environment"},
	{"KRB5_CONFIG, KRB5CCNAME", "Kerberos configuration and ticket cache, as for kinit"},
	{envTLSCA + ", " + envTLSCert + ", " + envTLSKey, "defaults for `--tls-ca`, `--tls-cert`, `--tls-key`"},
	{envProgress, "`1`: default for `--progress`"},
	{envLogFormat, "default for `--log-format` (`text` or `json`)"},
	{envMetricsFile, "default for `--metrics-file`"},
	{"NOTIFY_SOCKET", "set by systemd for a `Type=notify` unit: zklock tells systemd where it stands while it waits and holds, and extends the start timeout while it waits (see [systemd](systemd.md)); passed on to the command, whose own `READY=1` ends the unit's start"},
	{"TRACEPARENT", "a W3C trace context (`00-<trace-id>-<span-id>-<flags>`), as CI runners and instrumented schedulers set it: under `--log-format json` every event carries its `trace_id`; passed on to the command unchanged"},
	{runner.EnvHeld + ", ZKLOCK_PID", "set for the command: the locks it holds, which a zklock started inside it reads to re-enter (see `zklock help queue`)"},
	{"NO_COLOR", "any value: no colour"},
	{"TERM", "`dumb`: no colour, no status line while waiting, no symbols"},
}

// environmentHelp is the environment as --help shows it. Like the other
// help lists, it is made on first use, not at package initialisation:
// every zklock process initialises this package, its watchdog included.
var environmentHelp = sync.OnceValue(func() string { return "Environment:\n" + helpList(environment) })

// commandVariables are the variables the command gets (see
// runner.CommandVariables), as references.
func commandVariables() []reference {
	out := make([]reference, len(runner.CommandVariables))
	for i, v := range runner.CommandVariables {
		out[i] = reference{v.Name, v.Meaning}
	}
	return out
}

// commandEnvironmentHelp is what the command gets, as zklock help environment
// shows it.
var commandEnvironmentHelp = sync.OnceValue(func() string { return "Environment of CMD:\n" + helpList(commandVariables()) })
