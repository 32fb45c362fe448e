package sasl

import (
	"errors"
	"fmt"
	"strings"

	"github.com/zklock/zklock/internal/files"
	"github.com/zklock/zklock/zkconn"
)

// A Java JAAS login configuration file, as sites give it to zookeeper-shell,
// Kafka or HBase:
//
//	Client {
//	  org.apache.zookeeper.server.auth.DigestLoginModule required
//	  username="bob"
//	  password="secret";
//	};
//
// A section names login modules, each with a control flag and key=value
// options, ended by ';'. Values are words or double-quoted strings with
// backslash escapes; // and /* */ comments are allowed, as in Java's own
// parser. zklock reads the first login module of the chosen section.

// Login modules zklock understands.
const (
	jaasDigestModule = "org.apache.zookeeper.server.auth.DigestLoginModule"
	jaasKrb5Module   = "com.sun.security.auth.module.Krb5LoginModule"
)

// DefaultJAASSection is the section ZooKeeper's Java client reads
// (zookeeper.sasl.clientconfig).
const DefaultJAASSection = "Client"

// ErrBadJAAS marks a JAAS file zklock cannot use.
var ErrBadJAAS = errors.New("bad JAAS file")

// JAASError names what in a JAAS file is wrong: the file, the section and,
// where one is at fault, the key (or the login module).
type JAASError struct {
	File, Section, Key string
	Problem            string
}

func (e *JAASError) Error() string {
	where := "JAAS file " + e.File
	if e.Section != "" {
		where += ", section " + e.Section
	}
	if e.Key != "" {
		where += ", " + e.Key
	}
	return where + ": " + e.Problem
}

func (e *JAASError) Is(target error) bool { return target == ErrBadJAAS }

// jaasModule is one login module entry of a section.
type jaasModule struct {
	class, flag string
	options     map[string]string
}

// ReadJAAS reads section of a JAAS file and returns the SASL login its
// first login module describes.
func ReadJAAS(file, section string) (zkconn.SASLLogin, error) {
	kind := files.JAAS
	kind.Secret = jaasSecret
	b, err := kind.Read(file)
	if err != nil {
		return nil, err
	}
	sections, err := parseJAAS(string(b))
	if err != nil {
		return nil, &JAASError{File: file, Problem: err.Error()}
	}
	mods, ok := sections[section]
	if !ok {
		return nil, &JAASError{File: file, Section: section, Problem: "no such section"}
	}
	if len(mods) == 0 {
		return nil, &JAASError{File: file, Section: section, Problem: "no login module"}
	}
	return jaasLogin(file, section, mods[0])
}

func jaasLogin(file, section string, m jaasModule) (zkconn.SASLLogin, error) {
	need := func(key string) (string, error) {
		v := m.options[key]
		if v == "" {
			return "", &JAASError{File: file, Section: section, Key: "key " + key,
				Problem: "missing (" + m.class + " needs it)"}
		}
		return v, nil
	}
	switch m.class {
	case jaasDigestModule:
		user, err := need("username")
		if err != nil {
			return nil, err
		}
		pw, err := need("password")
		if err != nil {
			return nil, err
		}
		return &DigestLogin{Username: user, Password: pw}, nil
	case jaasKrb5Module:
		k := &KerberosLogin{Client: m.options["principal"]}
		switch {
		case isTrue(m.options["useKeyTab"]):
			kt, err := need("keyTab")
			if err != nil {
				return nil, err
			}
			if _, err := need("principal"); err != nil {
				return nil, err
			}
			k.Keytab = kt
		case isTrue(m.options["useTicketCache"]):
			k.CCache = m.options["ticketCache"]
		default:
			return nil, &JAASError{File: file, Section: section, Key: "key useKeyTab",
				Problem: "missing: zklock logs in from a keytab (useKeyTab=true, keyTab, principal) or a ticket cache (useTicketCache=true), never by prompting for a password"}
		}
		return k, nil
	}
	return nil, &JAASError{File: file, Section: section, Key: "login module " + m.class,
		Problem: "not supported (zklock reads " + jaasDigestModule + " and " + jaasKrb5Module + ")"}
}

func isTrue(v string) bool { return strings.EqualFold(v, "true") }

// parseJAAS splits a JAAS file into its sections.
func parseJAAS(src string) (map[string][]jaasModule, error) {
	toks, err := jaasTokens(src)
	if err != nil {
		return nil, err
	}
	sections := map[string][]jaasModule{}
	i := 0
	next := func() (jaasToken, bool) {
		if i >= len(toks) {
			return jaasToken{}, false
		}
		i++
		return toks[i-1], true
	}
	expect := func(what string) error {
		t, ok := next()
		if !ok || t.quoted || t.text != what {
			return fmt.Errorf("line %d: want %q", t.line, what)
		}
		return nil
	}
	for i < len(toks) {
		name, _ := next()
		if name.quoted || isJAASPunct(name.text) {
			return nil, fmt.Errorf("line %d: want a section name, got %q", name.line, name.text)
		}
		if err := expect("{"); err != nil {
			return nil, err
		}
		var mods []jaasModule
		for {
			t, ok := next()
			if !ok {
				return nil, fmt.Errorf("section %s is not closed with '}'", name.text)
			}
			if !t.quoted && t.text == "}" {
				break
			}
			flag, ok := next()
			if !ok || flag.quoted || isJAASPunct(flag.text) {
				return nil, fmt.Errorf("line %d: login module %s needs a control flag (required, requisite, sufficient or optional)", t.line, t.text)
			}
			m := jaasModule{class: t.text, flag: flag.text, options: map[string]string{}}
			for {
				k, ok := next()
				if !ok {
					return nil, fmt.Errorf("login module %s is not ended with ';'", m.class)
				}
				if !k.quoted && k.text == ";" {
					break
				}
				if err := expect("="); err != nil {
					return nil, fmt.Errorf("%v after option %s", err, k.text)
				}
				v, ok := next()
				if !ok || (!v.quoted && isJAASPunct(v.text)) {
					return nil, fmt.Errorf("line %d: option %s has no value", k.line, k.text)
				}
				m.options[k.text] = v.text
			}
			mods = append(mods, m)
		}
		if err := expect(";"); err != nil {
			return nil, fmt.Errorf("%v after section %s", err, name.text)
		}
		sections[name.text] = mods
	}
	return sections, nil
}

type jaasToken struct {
	text   string
	quoted bool
	line   int
}

func isJAASPunct(s string) bool { return s == "{" || s == "}" || s == ";" || s == "=" }

// jaasTokens splits src into words, quoted strings and the punctuation
// { } ; =, dropping whitespace and comments.
func jaasTokens(src string) ([]jaasToken, error) {
	var toks []jaasToken
	line := 1
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("line %d: unterminated comment", line)
			}
			line += strings.Count(src[i:i+2+end], "\n")
			i += 2 + end + 2
		case c == '{' || c == '}' || c == ';' || c == '=':
			toks = append(toks, jaasToken{text: string(c), line: line})
			i++
		case c == '"':
			var b strings.Builder
			start := line
			i++
			for ; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '\\' && i+1 < len(src) {
					i++
				}
				if src[i] == '\n' {
					line++
				}
				b.WriteByte(src[i])
			}
			if i >= len(src) {
				return nil, fmt.Errorf("line %d: unterminated string", start)
			}
			i++
			toks = append(toks, jaasToken{text: b.String(), quoted: true, line: start})
		default:
			j := i
			for j < len(src) && !strings.ContainsRune(" \t\r\n{};=\"", rune(src[j])) {
				j++
			}
			toks = append(toks, jaasToken{text: src[i:j], line: line})
			i = j
		}
	}
	return toks, nil
}

// jaasSecret reports whether a JAAS file holds a password: a login
// module's password option, or a user_NAME option of a server's section.
// Such a file is a secret (files.Kind.Secret); one that only names a
// keytab or a ticket cache is not.
func jaasSecret(data []byte) bool {
	sections, err := parseJAAS(string(data))
	if err != nil {
		return false // ReadJAAS says what is wrong with it
	}
	for _, mods := range sections {
		for _, m := range mods {
			for k := range m.options {
				if k == "password" || strings.HasPrefix(k, "user_") {
					return true
				}
			}
		}
	}
	return false
}
