package winapi

// Each function returns its HRESULT or Win32 error code as a
// syscall.Errno, nil on success. A SID the profile functions return is
// freed with windows.FreeSid; the path GetAppContainerFolderPath returns,
// with windows.CoTaskMemFree.
//
// CreateAppContainerProfile creates the profile name, with the given
// capabilities, and returns its SID. DeleteAppContainerProfile deletes a
// profile and its folders. DeriveAppContainerSidFromAppContainerName is
// the SID of profile name. GetAppContainerFolderPath is the folder of the
// profile whose SID is sid (in string form). The NetworkIsolation
// functions read and replace the list of AppContainers exempted from
// loopback isolation (replacing it needs an administrator). DeleteAce
// removes entry index of acl.

//sys CreateAppContainerProfile(name *uint16, displayName *uint16, description *uint16, capabilities *windows.SIDAndAttributes, capabilityCount uint32, sid **windows.SID) (hr error) = userenv.CreateAppContainerProfile
//sys DeleteAppContainerProfile(name *uint16) (hr error) = userenv.DeleteAppContainerProfile
//sys DeriveAppContainerSidFromAppContainerName(name *uint16, sid **windows.SID) (hr error) = userenv.DeriveAppContainerSidFromAppContainerName
//sys GetAppContainerFolderPath(sid *uint16, path **uint16) (hr error) = userenv.GetAppContainerFolderPath
//sys NetworkIsolationGetAppContainerConfig(count *uint32, sids **windows.SIDAndAttributes) (ret error) = firewallapi.NetworkIsolationGetAppContainerConfig
//sys NetworkIsolationSetAppContainerConfig(count uint32, sids *windows.SIDAndAttributes) (ret error) = firewallapi.NetworkIsolationSetAppContainerConfig
//sys DeleteAce(acl *windows.ACL, index uint32) (err error) = advapi32.DeleteAce
