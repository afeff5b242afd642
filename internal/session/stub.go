package session

// Stubs of the contract in api.go, replaced by the implementation.

import (
	"context"
	"errors"
	"os"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/report/jsonv1"
)

var errStub = errors.New("session: not implemented yet")

// Manager holds the sessions of one server.
type Manager struct{}

// Session is one long-lived sandbox.
type Session struct{}

func NewManager(opt Options) (*Manager, error) { return nil, errStub }
func (m *Manager) Policies() []PolicyInfo      { return nil }
func (m *Manager) Create(ctx context.Context, req CreateRequest) (*Session, error) {
	return nil, errStub
}
func (m *Manager) Get(id string) (*Session, error)                 { return nil, errStub }
func (m *Manager) List() []Info                                    { return nil }
func (m *Manager) CloseSession(id string) (jsonv1.Document, error) { return jsonv1.Document{}, errStub }
func (m *Manager) Shutdown()                                       {}

func (s *Session) Info() Info { return Info{} }
func (s *Session) Run(ctx context.Context, req RunRequest, out Output) (RunResult, error) {
	return RunResult{}, errStub
}
func (s *Session) Start(req StartRequest) (Proc, error) { return Proc{}, errStub }
func (s *Session) Procs() []Proc                        { return nil }
func (s *Session) Output(id string, stdoutFrom, stderrFrom int64) (ProcOutput, error) {
	return ProcOutput{}, errStub
}
func (s *Session) Signal(id string, sig string) error { return errStub }
func (s *Session) Stop(id string) (Proc, error)       { return Proc{}, errStub }
func (s *Session) ReadFile(path string, max int64) ([]byte, FileInfo, error) {
	return nil, FileInfo{}, errStub
}
func (s *Session) WriteFile(path string, data []byte, mode os.FileMode) (FileInfo, error) {
	return FileInfo{}, errStub
}
func (s *Session) List(path string) ([]FileInfo, error) { return nil, errStub }
func (s *Session) Stat(path string) (FileInfo, error)   { return FileInfo{}, errStub }
func (s *Session) Report() jsonv1.Document              { return jsonv1.Document{} }
func (s *Session) Refusals() []jsonv1.Refusal           { return nil }
func (s *Session) Sandbox() *moat.Sandbox               { return nil }
func (s *Session) Close() (jsonv1.Document, error)      { return jsonv1.Document{}, errStub }
