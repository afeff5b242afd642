// Package quarantine reads and tidies moat's quarantine: the directory of
// the state directory where Close (and the sweep of a run that died) moves
// the control entries a sandbox created or changed in the places it could
// write (.git, .moat-*, hooks, ...), STATE/quarantine/ID/PLACE/NAME, ID
// being the run's sandbox id and PLACE the place's path escaped (every
// byte but letters, digits, '.', '_' and '-' as %XX).
//
// What lies in an entry was written by a sandbox: hostile data. Every step
// here is bounded (entries walked, bytes read), follows no link, opens no
// FIFO or device (regular files only, opened O_NONBLOCK|O_NOFOLLOW and
// checked after the open), and prints names and contents escaped, so that
// no terminal escape written by a sandbox reaches the terminal. Restoring
// is for the command line only: the caller names each path, is shown its
// content first, and nothing on the host is ever replaced.
package quarantine
