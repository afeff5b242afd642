package sbpl

// Param is one sandbox-exec parameter: the profile names Key as
// (param "Key"), and sandbox-exec is given -D Key=Value. The zero value is
// an empty key, which Build never makes.
type Param struct {
	Key, Value string
}

// Profile is a built profile: the SBPL text and the parameters it names.
// The zero value is no profile.
type Profile struct {
	// Text is the SBPL source. It holds no path of the policy.
	Text string
	// Params are the paths, in the order the text first names them.
	Params []Param
}

// Args returns sandbox-exec's arguments before the command: -p TEXT,
// then -D KEY=VALUE for each parameter.
func (p Profile) Args() []string {
	args := make([]string, 0, 2+2*len(p.Params))
	args = append(args, "-p", p.Text)
	for _, kv := range p.Params {
		args = append(args, "-D", kv.Key+"="+kv.Value)
	}
	return args
}

// Lookup returns the value of parameter key.
func (p Profile) Lookup(key string) (string, bool) {
	for _, kv := range p.Params {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return "", false
}
