package venv

// CheckInstalled is checkInstalled, for the tests.
var CheckInstalled = checkInstalled
