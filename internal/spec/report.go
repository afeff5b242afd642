package spec

// Layer is one enforcement layer and whether it is active. The zero value
// is an unnamed, inactive layer.
type Layer struct {
	Name   string
	Active bool
	Detail string
}

// Report is what a backend enforces for one policy on this host. The zero
// value enforces nothing.
type Report struct {
	// Platform names the backend ("linux").
	Platform string
	// Layers are every layer, active or not, in the order to show them.
	Layers []Layer
	// Gaps are what a best-effort sandbox is exposed to that strict
	// enforcement would have refused.
	Gaps []string
}
