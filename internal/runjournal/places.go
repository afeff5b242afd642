package runjournal

import "github.com/moat-sandbox/moat/internal/hostinput"

// recordPlaces records the run's outliving places (Config.Places and
// Config.Outliving: a supplied working directory, a supplied home, the
// kept cache stores, the writable grants and a venv it may install into)
// in the user's moat state directory, before any command runs, so that a
// later read of a config, a policy or a fragment there is refused unless
// the user pinned its content. It fails closed: a run whose places cannot
// be recorded does not start, since a later run could not tell what this
// one may have written. A place recorded already costs one lstat.
func recordPlaces(places []string) error {
	if len(places) == 0 {
		return nil
	}
	root, err := StateRoot()
	if err != nil {
		return err
	}
	return (hostinput.Store{Dir: root}).RecordPlaces(places)
}
