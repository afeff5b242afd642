package session

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/moat-sandbox/moat/internal/fileserve"
	"github.com/moat-sandbox/moat/internal/paths"
)

// checkReply decodes a reply frame strictly (unknown fields, trailing data
// and wrong types refused) and checks it against the request and the
// limits: the server runs in the sandbox, so a reply is hostile input. Any
// failure breaks the protocol, and the caller stops the server.
func checkReply(b []byte, req fileserve.Request, cfg fileserve.Config) (fileserve.Reply, error) {
	var rep fileserve.Reply
	if err := fileserve.Strict(b, &rep); err != nil {
		return rep, fmt.Errorf("a reply that is not the protocol's: %w", err)
	}
	if rep.ID != req.ID {
		return rep, fmt.Errorf("a reply to call %d for call %d", rep.ID, req.ID)
	}
	if rep.Error != nil {
		if rep.Info != nil || rep.Data != nil || rep.Entries != nil || rep.Truncated {
			return rep, errors.New("a failed call with a result")
		}
		return rep, checkFault(rep.Error)
	}
	places := make([]string, 0, len(cfg.Places))
	for _, p := range cfg.Places {
		places = append(places, p.Path)
	}
	switch req.Op {
	case fileserve.OpRead:
		if rep.Info == nil || rep.Entries != nil || rep.Truncated {
			return rep, errors.New("a read's reply without its file, or with a listing")
		}
		if int64(len(rep.Data)) > req.Max {
			return rep, fmt.Errorf("a read of %d bytes, more than the %d asked", len(rep.Data), req.Max)
		}
		if rep.Info.Type != fileserve.TypeFile {
			return rep, fmt.Errorf("a read of a %q", rep.Info.Type)
		}
	case fileserve.OpWrite, fileserve.OpStat:
		if rep.Info == nil || rep.Data != nil || rep.Entries != nil || rep.Truncated {
			return rep, fmt.Errorf("a %s's reply without its file, or with more", req.Op)
		}
		if req.Op == fileserve.OpWrite && rep.Info.Type != fileserve.TypeFile {
			return rep, fmt.Errorf("a write that made a %q", rep.Info.Type)
		}
	case fileserve.OpList:
		if rep.Info != nil || rep.Data != nil {
			return rep, errors.New("a listing with a file")
		}
		if len(rep.Entries) > cfg.MaxEntries {
			return rep, fmt.Errorf("a listing of %d entries, more than %d", len(rep.Entries), cfg.MaxEntries)
		}
		for i := range rep.Entries {
			if err := checkInfo(&rep.Entries[i], places); err != nil {
				return rep, err
			}
		}
		return rep, nil
	default:
		return rep, fmt.Errorf("a reply to an unknown call %q", req.Op)
	}
	return rep, checkInfo(rep.Info, places)
}

// checkInfo checks one file's description: a path in a place, its name,
// a known type, sane numbers, and a link target only on a link.
func checkInfo(in *fileserve.Info, places []string) error {
	switch {
	case len(in.Path) > fileserve.MaxPath || !isAbsClean(in.Path) || !paths.UnderAny(in.Path, places):
		return fmt.Errorf("a file outside the places: %q", in.Path)
	case in.Name != lastName(in.Path):
		return fmt.Errorf("a file named %q at %q", in.Name, in.Path)
	case !fileserve.ValidType(in.Type):
		return fmt.Errorf("a file of type %q", in.Type)
	case in.Size < 0 || in.Mode > 0o7777:
		return fmt.Errorf("a file of size %d, mode %o", in.Size, in.Mode)
	case len(in.Target) > fileserve.MaxPath || strings.IndexByte(in.Target, 0) >= 0:
		return errors.New("a link target too long or with a NUL")
	case in.Target != "" && in.Type != fileserve.TypeSymlink:
		return fmt.Errorf("a target on a %q", in.Type)
	}
	return nil
}

// lastName is the final name of an absolute clean path ("/" for the root).
func lastName(p string) string {
	if p == "/" {
		return "/"
	}
	return p[strings.LastIndexByte(p, '/')+1:]
}

// checkFault checks a failed call's fault: a known code, an errno in
// range, a known type.
func checkFault(ft *fileserve.Fault) error {
	switch ft.Code {
	case fileserve.CodeNotFound, fileserve.CodeRefused, fileserve.CodeNotRegular,
		fileserve.CodeTooLarge, fileserve.CodeBadRequest, fileserve.CodeInternal:
	default:
		return fmt.Errorf("a fault with the code %q", ft.Code)
	}
	if ft.Errno < 0 || ft.Errno > 4095 {
		return fmt.Errorf("a fault with errno %d", ft.Errno)
	}
	if ft.Kind != "" && !fileserve.ValidType(ft.Kind) {
		return fmt.Errorf("a fault with the type %q", ft.Kind)
	}
	return nil
}

// faultError is the API's error for a checked fault. The words are the
// host's: the path is the caller's, quoted, and the cause an errno's
// text from this side.
func faultError(req fileserve.Request, ft *fileserve.Fault, cfg fileserve.Config) *Error {
	cause := ""
	if ft.Errno != 0 {
		cause = " (" + syscall.Errno(ft.Errno).Error() + ")"
	}
	p := req.Path
	switch ft.Code {
	case fileserve.CodeNotFound:
		return errorf(CodeNotFound, "%q: no such file or directory%s", p, cause)
	case fileserve.CodeRefused:
		return errorf(CodePathRefused, "%q: refused: the file API reaches only the working directory and the grants (writes only the writable ones), never through a link (an absolute one included) or \"..\" that leads out, and nothing the sandbox itself may not write%s", p, cause)
	case fileserve.CodeNotRegular:
		kind := ft.Kind
		if kind == "" {
			kind = "special file"
		}
		want := "a regular file"
		if req.Op == fileserve.OpList {
			want = "a directory"
		}
		return errorf(CodeNotRegular, "%q is a %s, not %s; links are never followed at the end of a path: stat it to see its target", p, kind, want)
	case fileserve.CodeTooLarge:
		return settingErrorf(CodeTooLarge, "limits.max-file-size", "%q: larger than the sandbox lets a file grow%s: at most %d bytes a write, and less where the session's file-size limit (limits.max-file-size, or narrow.limits.file_size_bytes) or what is left of its disk limit (limits.max-disk) is smaller", p, cause, cfg.MaxFileBytes)
	case fileserve.CodeBadRequest:
		return errorf(CodeBadRequest, "%q: not a path the file API takes (a NUL byte, too long, or an unknown call)", p)
	}
	return errorf(CodeInternal, "%q: the file server failed%s", p, cause)
}
