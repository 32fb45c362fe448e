package bench

// Variant is zklock's run with extra flags or environment, measured in the
// uncontended test beside plain zklock as a tool of its own, so that the
// report shows what an option costs as a ratio in the same run. Another
// file adds its variants, and the rows that judge them, in an init
// function:
//
//	func init() {
//		variants = append(variants, Variant{Key: "zklock-json", Name: "zklock --log-format json",
//			Args: []string{"--log-format", "json"}})
//		extraTargets = append(extraTargets, func(r *Results) []Target { … r.latency("zklock-json") … })
//	}
type Variant struct {
	Key  string // the tool's key in results.json; starts with "zklock-"
	Name string // as the report names it
	// Args go after `run`, before --path; "{logdir}" in them is the
	// run's log directory. Env is added to the environment.
	Args []string
	Env  []string
	// Note is what the report's list of tools says of it.
	Note string
}

// variants are the zklock variants of this build of the driver.
var variants []Variant
