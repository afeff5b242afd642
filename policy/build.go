package policy

// build checks the top-level key build: true or false.
func (c *checker) build(raw any) (*bool, error) {
	if raw == nil {
		return nil, nil
	}
	b, ok := raw.(bool)
	if !ok {
		return nil, c.fail([]string{"build"}, "build: want true or false, not %s", typeName(raw))
	}
	return &b, nil
}
