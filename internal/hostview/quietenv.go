package hostview

// QuietEnv turns off the update checks that package managers make on
// their own, unasked: npm's update notifier (and the update-notifier
// package many Node CLIs use) asks registry.npmjs.org on every command in
// a fresh home, which is every sandbox's. Without network that lookup is
// refused, and moat would report a refusal for a command that succeeded
// (a plain "npm init" or "npm test"). A sandbox is not where tools are
// upgraded; Config.Env.Set overrides each entry. Every sandbox's
// environment has them; none is empty.
var QuietEnv = []string{"npm_config_update_notifier=false", "NO_UPDATE_NOTIFIER=1"}
