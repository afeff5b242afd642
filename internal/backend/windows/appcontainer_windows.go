package windows

import (
	"errors"
	"os"
	"syscall"
	"unsafe"

	xw "golang.org/x/sys/windows"

	"github.com/moat-sandbox/moat/internal/backend/windows/winapi"
)

// hresultAlreadyExists is HRESULT_FROM_WIN32(ERROR_ALREADY_EXISTS).
const hresultAlreadyExists = syscall.Errno(0x800700B7)

// container is one AppContainer profile: its name, its SID (allocated by
// userenv, freed with FreeSid) and the folder Windows gave it.
type container struct {
	name   string
	sid    *xw.SID
	caps   []xw.SIDAndAttributes
	folder string
}

// createContainer creates profile name with the capability SIDs caps. A
// profile of that name left by a crashed moat (the names are random per
// sandbox, so it is nobody else's) is deleted and created again.
func createContainer(name string, caps []string) (*container, error) {
	c := &container{name: name}
	for _, s := range caps {
		sid, err := xw.StringToSid(s)
		if err != nil {
			return nil, errors.New("windows: capability " + s + ": " + err.Error())
		}
		c.caps = append(c.caps, xw.SIDAndAttributes{Sid: sid, Attributes: xw.SE_GROUP_ENABLED})
	}
	n16, err := xw.UTF16PtrFromString(name)
	if err != nil {
		return nil, err
	}
	desc, _ := xw.UTF16PtrFromString("moat sandbox")
	var capsPtr *xw.SIDAndAttributes
	if len(c.caps) > 0 {
		capsPtr = &c.caps[0]
	}
	err = winapi.CreateAppContainerProfile(n16, n16, desc, capsPtr, uint32(len(c.caps)), &c.sid)
	if errors.Is(err, hresultAlreadyExists) {
		_ = winapi.DeleteAppContainerProfile(n16)
		err = winapi.CreateAppContainerProfile(n16, n16, desc, capsPtr, uint32(len(c.caps)), &c.sid)
	}
	if err != nil {
		return nil, errors.New("windows: CreateAppContainerProfile " + name + ": " + err.Error())
	}
	s16, err := xw.UTF16PtrFromString(c.sid.String())
	if err != nil {
		c.close()
		return nil, err
	}
	var folder *uint16
	if err := winapi.GetAppContainerFolderPath(s16, &folder); err != nil {
		c.close()
		return nil, errors.New("windows: GetAppContainerFolderPath " + name + ": " + err.Error())
	}
	c.folder = xw.UTF16PtrToString(folder)
	xw.CoTaskMemFree(unsafe.Pointer(folder))
	return c, nil
}

// temp is the container's own temp directory, made if Windows has not:
// it inherits the folder's access list, which names the container.
func (c *container) temp() (string, error) {
	t := c.folder + `\Temp`
	if err := os.MkdirAll(t, 0o700); err != nil {
		return "", errors.New("windows: container temp: " + err.Error())
	}
	return t, nil
}

// close frees the SID and deletes the profile and its folders.
func (c *container) close() error {
	if c.sid != nil {
		_ = xw.FreeSid(c.sid)
		c.sid = nil
	}
	n16, err := xw.UTF16PtrFromString(c.name)
	if err != nil {
		return err
	}
	if err := winapi.DeleteAppContainerProfile(n16); err != nil {
		return errors.New("windows: DeleteAppContainerProfile " + c.name + ": " + err.Error())
	}
	return nil
}
