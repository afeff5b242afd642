package moat

import (
	"errors"
	"testing"
)

// DenyTCPConnect refuses port 0, which no connection reaches; any other
// port passes Validate.
func TestValidateDenyTCPConnect(t *testing.T) {
	for _, tc := range []struct {
		ports []uint16
		ok    bool
	}{
		{nil, true},
		{[]uint16{8080}, true},
		{[]uint16{1, 65535}, true},
		{[]uint16{8080, 0}, false},
	} {
		err := Config{DenyTCPConnect: tc.ports}.Validate()
		var ce *ConfigError
		if tc.ok != (err == nil) || (!tc.ok && (!errors.As(err, &ce) || ce.Field != "deny tcp connect")) {
			t.Errorf("Validate(DenyTCPConnect %v) = %v, want ok=%v", tc.ports, err, tc.ok)
		}
	}
}
