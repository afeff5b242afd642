package cachehome

// Dir is one kept cache directory. The zero value names none.
type Dir struct {
	// Name names its store directory.
	Name string
	// Rel is where the tool looks for it, relative to HOME.
	Rel string
}

// Dirs are the kept cache directories. Each holds data a tool fetched or
// built, never settings: ~/.cargo/git is left out because it holds git
// repositories, whose config and hooks git reads and runs (cargo runs git
// there with net.git-fetch-with-cli), which makes it start-up state rather
// than a cache.
var Dirs = []Dir{
	{Name: "go-build", Rel: ".cache/go-build"},
	{Name: "go-mod", Rel: "go/pkg/mod"},
	{Name: "npm", Rel: ".npm/_cacache"},
	{Name: "pip", Rel: ".cache/pip"},
	{Name: "cargo-registry", Rel: ".cargo/registry"},
}
