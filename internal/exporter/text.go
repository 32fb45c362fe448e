package exporter

import (
	"io"
	"sort"
	"strconv"
	"strings"
)

// family is one metric and its samples, as the text exposition format
// (version 0.0.4) writes them: a HELP and a TYPE line, then one line per
// sample. It is the small part of a client library this package needs.
type family struct {
	name, help, typ string
	samples         []sample
}

type sample struct {
	labels [][2]string // name, value: in the order written
	value  float64
}

func (f *family) add(v float64, labels ...string) {
	s := sample{value: v}
	for i := 0; i+1 < len(labels); i += 2 {
		s.labels = append(s.labels, [2]string{labels[i], labels[i+1]})
	}
	f.samples = append(f.samples, s)
}

// write writes the families in order; a family without samples is left
// out, as Prometheus has nothing to record of it.
func write(w io.Writer, fs []*family) error {
	var b strings.Builder
	for _, f := range fs {
		if len(f.samples) == 0 {
			continue
		}
		b.WriteString("# HELP " + f.name + " " + f.help + "\n")
		b.WriteString("# TYPE " + f.name + " " + f.typ + "\n")
		for _, s := range f.samples {
			b.WriteString(f.name)
			if len(s.labels) > 0 {
				parts := make([]string, len(s.labels))
				for i, l := range s.labels {
					parts[i] = l[0] + "=" + quote(l[1])
				}
				b.WriteString("{" + strings.Join(parts, ",") + "}")
			}
			b.WriteString(" " + strconv.FormatFloat(s.value, 'g', -1, 64) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sortSamples orders a family's samples by their label values, so that
// two scrapes of the same tree read alike.
func sortSamples(f *family) {
	key := func(s sample) string {
		var k []string
		for _, l := range s.labels {
			k = append(k, l[1])
		}
		return strings.Join(k, "\x00")
	}
	sort.SliceStable(f.samples, func(i, j int) bool { return key(f.samples[i]) < key(f.samples[j]) })
}
