package aclplan

import "strings"

// Mask is a set of NTFS access rights (an ACCESS_MASK). Several rights
// share a bit and are named by the kind of object they apply to: bit 0x20
// is TRAVERSE on a directory and EXECUTE on a file, which is why the
// planner grants directories and files in separate entries. The zero value
// grants nothing.
type Mask uint32

// The rights the planner uses; the values are the Windows SDK's.
const (
	ReadData        Mask = 0x1 // LIST_DIRECTORY on a directory
	WriteData       Mask = 0x2 // ADD_FILE on a directory
	AppendData      Mask = 0x4 // ADD_SUBDIRECTORY on a directory
	ReadEA          Mask = 0x8
	WriteEA         Mask = 0x10
	Execute         Mask = 0x20 // TRAVERSE on a directory
	DeleteChild     Mask = 0x40
	ReadAttributes  Mask = 0x80
	WriteAttributes Mask = 0x100
	Delete          Mask = 0x10000
	ReadControl     Mask = 0x20000
	WriteDAC        Mask = 0x40000
	WriteOwner      Mask = 0x80000
	Synchronize     Mask = 0x100000
)

// The rights of each use. None of them holds WRITE_DAC or WRITE_OWNER: the
// container never changes an access list moat set.
const (
	// FileRead reads a file's data, attributes and security descriptor.
	FileRead = ReadData | ReadEA | ReadAttributes | ReadControl | Synchronize
	// FileWrite writes and extends a file and its attributes.
	FileWrite = WriteData | AppendData | WriteEA | WriteAttributes
	// DirRead lists and traverses a directory.
	DirRead = ReadData | ReadEA | Execute | ReadAttributes | ReadControl | Synchronize
	// DirWrite creates files and directories in a directory and removes
	// its entries.
	DirWrite = WriteData | AppendData | WriteEA | WriteAttributes | DeleteChild
	// All is every right a deny takes away.
	All = FileRead | FileWrite | Execute | DeleteChild | Delete | WriteDAC | WriteOwner
	// Modify is every right that changes an object or its entries.
	Modify = FileWrite | DeleteChild | Delete | WriteDAC | WriteOwner
)

type bitName struct {
	bit       Mask
	file, dir string
}

var bitNames = []bitName{
	{ReadData, "READ_DATA", "LIST_DIRECTORY"},
	{WriteData, "WRITE_DATA", "ADD_FILE"},
	{AppendData, "APPEND_DATA", "ADD_SUBDIRECTORY"},
	{ReadEA, "READ_EA", "READ_EA"},
	{WriteEA, "WRITE_EA", "WRITE_EA"},
	{Execute, "EXECUTE", "TRAVERSE"},
	{DeleteChild, "DELETE_CHILD", "DELETE_CHILD"},
	{ReadAttributes, "READ_ATTRIBUTES", "READ_ATTRIBUTES"},
	{WriteAttributes, "WRITE_ATTRIBUTES", "WRITE_ATTRIBUTES"},
	{Delete, "DELETE", "DELETE"},
	{ReadControl, "READ_CONTROL", "READ_CONTROL"},
	{WriteDAC, "WRITE_DAC", "WRITE_DAC"},
	{WriteOwner, "WRITE_OWNER", "WRITE_OWNER"},
	{Synchronize, "SYNCHRONIZE", "SYNCHRONIZE"},
}

// Names spells m with the rights' names for objects of kind k, joined by
// "|"; an unnamed bit is written in hex, and the empty mask is "0".
func (m Mask) Names(k Kind) string {
	var out []string
	rest := m
	for _, b := range bitNames {
		if m&b.bit == 0 {
			continue
		}
		rest &^= b.bit
		if k == Dir {
			out = append(out, b.dir)
		} else {
			out = append(out, b.file)
		}
	}
	if rest != 0 {
		out = append(out, "0x"+hex(uint32(rest)))
	}
	if len(out) == 0 {
		return "0"
	}
	return strings.Join(out, "|")
}

func hex(v uint32) string {
	const digits = "0123456789abcdef"
	if v == 0 {
		return "0"
	}
	var b []byte
	for ; v > 0; v >>= 4 {
		b = append([]byte{digits[v&0xf]}, b...)
	}
	return string(b)
}
