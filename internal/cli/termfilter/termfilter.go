// Package termfilter removes, from output bound for a terminal, the
// escape sequences that act outside the text a program shows: clipboard
// writes (OSC 52), window titles (OSC 0, 1, 2), and the queries and
// reports a terminal answers by typing into its input (device attributes,
// status and cursor reports, DECRQSS and other DCS strings, XTVERSION,
// window reports, OSC color queries, APC graphics queries). What a
// sandboxed program writes to moat's terminal could otherwise put a command
// on the user's clipboard or type into the host shell once moat exits.
//
// The filter is a streaming parser with constant memory: it keeps at most
// a CSI's parameters (64 bytes; a longer CSI is dropped whole) and an OSC's
// number (8 bytes), never a string's payload, which it either passes or
// drops as it comes.
package termfilter

import (
	"io"
	"strings"
	"unicode/utf8"
)

// Mode says what a [Writer] removes. The zero value is [Strict].
type Mode int

const (
	// Strict passes colors, cursor movement and other display sequences,
	// OSC 7, 8 (hyperlinks) and 133 (prompt marks) only, and removes every
	// other OSC, every DCS, SOS, PM and APC string, the CSI queries and
	// reports (DA, DSR and CPR, DECRQM, XTVERSION, window operations and
	// reports, DECREQTPARM, kitty keyboard query) and DECID (ESC Z): for
	// output that no one types at.
	Strict Mode = iota
	// Clipboard removes only the sequences that write the host's
	// clipboard or files (OSC 52, 1337, 5522, 5113): for an interactive
	// session, whose programs need the terminal's answers to their
	// queries.
	Clipboard
)

// maxCSI bounds the parameter bytes of a CSI the filter holds to decide.
const maxCSI = 64

// maxOSCNum bounds the digits of an OSC's number.
const maxOSCNum = 8

type state int

const (
	ground   state = iota
	esc            // after ESC
	escInter       // ESC, intermediates
	csi            // collecting a CSI
	csiDrop        // inside a CSI too long to hold: dropped to its end
	oscNum         // collecting an OSC's number
	strPass        // inside a string that passes
	strDrop        // inside a string that is dropped
	strEsc         // ESC inside a string: ST or the end of it
	utf            // collecting a character outside ASCII
)

// Writer filters what is written to it and passes the rest to its
// destination. The zero value is not usable; use [New].
type Writer struct {
	w    io.Writer
	mode Mode
	st   state
	hold []byte // a CSI or an OSC's start, undecided
	drop bool   // strEsc: whether the string was being dropped
	out  []byte
	char []byte // utf: the character's bytes so far
}

// New returns a Writer that writes to w what is written to it, less what
// mode removes.
func New(w io.Writer, mode Mode) *Writer {
	return &Writer{w: w, mode: mode}
}

// Write filters p. It reports len(p) unless the destination fails; a
// sequence cut between writes is decided when its end comes.
func (f *Writer) Write(p []byte) (int, error) {
	f.out = f.out[:0]
	for _, b := range p {
		f.step(b)
	}
	if len(f.out) == 0 {
		return len(p), nil
	}
	if _, err := f.w.Write(f.out); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (f *Writer) emit(b ...byte) { f.out = append(f.out, b...) }

// step feeds one byte through the state machine.
func (f *Writer) step(b byte) {
	switch f.st {
	case ground:
		switch b {
		case 0x1b:
			f.hold = append(f.hold[:0], b)
			f.st = esc
		default:
			if b < 0x80 {
				f.emit(b)
			} else if utf8.RuneStart(b) && b >= 0xc2 && b <= 0xf4 {
				f.char = append(f.char[:0], b)
				f.st = utf
			}
			// A stray continuation byte or one that never starts UTF-8 is
			// dropped: output is whole characters only, so nothing the
			// filter drops can join what is around it into a C1 control.
		}
	case utf:
		if b < 0x80 || b > 0xbf || utf8.RuneStart(b) {
			f.st = ground // an unfinished character: dropped
			f.step(b)
			return
		}
		f.char = append(f.char, b)
		if !utf8.FullRune(f.char) {
			return
		}
		f.st = ground
		r, _ := utf8.DecodeRune(f.char)
		if r == utf8.RuneError {
			return
		}
		switch {
		case r == 0x9b: // CSI
			f.hold = append(f.hold[:0], f.char...)
			f.st = csi
		case r == 0x9d: // OSC
			f.hold = append(f.hold[:0], f.char...)
			f.st = oscNum
		case r == 0x90 || r == 0x98 || r == 0x9e || r == 0x9f: // DCS, SOS, PM, APC
			f.startString(f.char...)
		case r >= 0x80 && r <= 0x9f && f.mode == Strict:
			// other C1 controls (SCI, DECID's 8-bit form, among them):
			// dropped
		default:
			f.emit(f.char...)
		}
	case esc:
		switch {
		case b == '[':
			f.hold = append(f.hold, b)
			f.st = csi
		case b == ']':
			f.hold = append(f.hold, b)
			f.st = oscNum
		case b == 'P' || b == 'X' || b == '^' || b == '_':
			f.startString(0x1b, b)
		case b == 'Z': // DECID: the terminal answers with its attributes
			f.st = ground
			if f.mode == Clipboard {
				f.emit(0x1b, b)
			}
		case b == 0x1b: // the first ESC does nothing on a terminal
			f.hold = append(f.hold[:0], b)
		case b >= 0x20 && b <= 0x2f:
			f.hold = append(f.hold, b)
			f.st = escInter
		case b == 0x18 || b == 0x1a: // CAN, SUB: cancelled
			f.st = ground
		case b < 0x20 || b == 0x7f:
			// A terminal runs (or ignores) a control inside an escape
			// sequence and stays in it: dropped, the sequence goes on.
		case b >= 0x80: // not an escape sequence: the ESC is dropped
			f.step0(b)
		default:
			f.emit(f.hold...)
			f.st = ground
			f.step0(b)
		}
	case escInter:
		switch {
		case b >= 0x20 && b <= 0x2f && len(f.hold) < maxCSI:
			f.hold = append(f.hold, b)
		case b >= 0x30 && b <= 0x7e:
			f.emit(f.hold...)
			f.emit(b)
			f.st = ground
		case b == 0x1b:
			f.hold = append(f.hold[:0], b)
			f.st = esc
		case b == 0x18 || b == 0x1a:
			f.st = ground
		case b < 0x20 || b == 0x7f:
			// run inside the sequence by a terminal: dropped
		default: // malformed: dropped, the byte looked at again
			f.st = ground
			f.step0(b)
		}
	case csi:
		switch {
		case b >= 0x40 && b <= 0x7e:
			f.st = ground
			if f.mode == Clipboard || !csiQuery(f.hold, b) {
				f.emit(f.hold...)
				f.emit(b)
			}
		case b >= 0x20 && b <= 0x3f:
			if len(f.hold) >= maxCSI {
				f.st = csiDrop
			} else {
				f.hold = append(f.hold, b)
			}
		case b == 0x1b:
			f.hold = append(f.hold[:0], b) // aborted: a new sequence
			f.st = esc
		case b == 0x18 || b == 0x1a:
			f.st = ground
		default:
			// Other controls: the terminal would run them inside the CSI;
			// the filter drops them. A byte outside ASCII ends it.
			if b >= 0x80 {
				f.st = ground
				f.step0(b)
			}
		}
	case csiDrop:
		switch {
		case b >= 0x40 && b <= 0x7e, b == 0x18, b == 0x1a:
			f.st = ground
		case b == 0x1b:
			f.hold = append(f.hold[:0], b)
			f.st = esc
		case b >= 0x80:
			f.st = ground
			f.step0(b)
		}
	case oscNum:
		switch {
		case b >= '0' && b <= '9':
			if len(f.hold) < maxOSCNum+3 { // one digit more marks it too long
				f.hold = append(f.hold, b)
			}
		default:
			// The number after ESC ] or its UTF-8 C1 form, as a terminal
			// reads it: leading zeros do not count; one too long to read
			// is dropped.
			num := strings.TrimLeft(string(f.hold[2:]), "0")
			if len(f.hold)-2 > maxOSCNum {
				num = "too long"
			} else if num == "" && len(f.hold) > 2 {
				num = "0"
			}
			if oscPasses(num, f.mode) {
				f.emit(f.hold...)
				f.st = strPass
			} else {
				f.st = strDrop
			}
			f.step(b)
		}
	case strPass, strDrop:
		drop := f.st == strDrop
		switch {
		case b == 0x07: // BEL ends an OSC
			f.st = ground
			if !drop {
				f.emit(b)
			}
		case b == 0x1b:
			f.drop = drop
			f.st = strEsc
		case b == 0x18 || b == 0x1a:
			f.st = ground
			if !drop {
				f.emit(0x1b, '\\') // end what was passed
			}
		case drop:
			// dropped as it comes
		case b >= 0x20 && b <= 0x7e:
			f.emit(b)
		default:
			// A byte a passed string has no use for (a control, a byte
			// outside ASCII, maybe a C1 ST): the string ends here for the
			// filter, which ends it for the terminal too, and the byte is
			// looked at from the ground state.
			f.emit(0x1b, '\\')
			f.st = ground
			f.step0(b)
		}
	case strEsc:
		if b == '\\' {
			f.st = ground
			if !f.drop {
				f.emit(0x1b, b)
			}
			return
		}
		if !f.drop {
			f.emit(0x1b, '\\')
		}
		f.hold = append(f.hold[:0], 0x1b)
		f.st = esc
		f.step(b)
	}
}

// step0 feeds b from the ground state.
func (f *Writer) step0(b byte) {
	f.st = ground
	f.step(b)
}

// startString begins a DCS, SOS, PM or APC string: dropped in Strict mode,
// passed in Clipboard mode.
func (f *Writer) startString(intro ...byte) {
	if f.mode == Clipboard {
		f.emit(intro...)
		f.st = strPass
		return
	}
	f.st = strDrop
}

// clipboardOSC are the OSC numbers that write the host's clipboard or
// files through the terminal: OSC 52 (xterm's clipboard), 1337 (iTerm2's
// Copy, CopyToClipboard and File), 5522 (kitty's clipboard) and 5113
// (kitty's file transfer).
var clipboardOSC = map[string]bool{"52": true, "1337": true, "5522": true, "5113": true}

// oscPasses reports whether the OSC numbered num passes in mode.
func oscPasses(num string, mode Mode) bool {
	if num == "too long" {
		return false
	}
	if mode == Clipboard {
		return !clipboardOSC[num]
	}
	switch num {
	case "7", "8", "133":
		return true
	}
	return false
}

// csiQuery reports whether the CSI in hold (its introducer and parameter
// and intermediate bytes) ending in final asks the terminal to answer, or
// works the window.
func csiQuery(hold []byte, final byte) bool {
	params := hold[2:]
	var private, inter byte
	if len(params) > 0 && params[0] >= 0x3c && params[0] <= 0x3f {
		private = params[0]
	}
	if n := len(params); n > 0 && params[n-1] >= 0x20 && params[n-1] <= 0x2f {
		inter = params[n-1]
	}
	switch {
	case final == 'c' && inter == 0: // DA1, DA2 (>), DA3 (=)
		return true
	case final == 'n' && inter == 0: // DSR, CPR, and the private reports
		return true
	case final == 't' && inter == 0: // window operations and reports
		return true
	case final == 'x' && inter == 0 && private == 0: // DECREQTPARM
		return true
	case final == 'p' && inter == '$': // DECRQM
		return true
	case final == 'w' && inter == '$': // DECRQPSR
		return true
	case final == 'q' && private == '>': // XTVERSION
		return true
	case final == 'u' && private == '?': // kitty keyboard query
		return true
	case final == 'S' && private == '?': // XTSMGRAPHICS
		return true
	case final == 'm' && private == '?': // XTQMODKEYS
		return true
	}
	return false
}

// Close drops an unfinished escape sequence or character and ends a
// passed string that was left open. The destination
// is not closed.
func (f *Writer) Close() error {
	defer func() { f.st = ground }()
	if f.st == strPass || f.st == strEsc && !f.drop {
		_, err := f.w.Write([]byte{0x1b, '\\'}) // end what was passed
		return err
	}
	return nil
}
