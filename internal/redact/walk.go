package redact

import "reflect"

// Walk redacts (Echo), in place, every string that ptr (a pointer) reaches:
// exported struct fields, slice and array elements, map values, through
// pointers. It is how a report (brk.Result, a phase's stats) is redacted
// as a whole before it is written, so that a field added later is
// covered too.
func (s *Secrets) Walk(ptr any) {
	if s == nil {
		return
	}
	s.walk(reflect.ValueOf(ptr), map[uintptr]bool{})
}

func (s *Secrets) walk(v reflect.Value, seen map[uintptr]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return
		}
		seen[v.Pointer()] = true
		s.walk(v.Elem(), seen)
	case reflect.Interface:
		if !v.IsNil() && v.Elem().Kind() == reflect.Pointer {
			s.walk(v.Elem(), seen)
		}
	case reflect.String:
		if v.CanSet() {
			if r := s.Echo(v.String()); r != v.String() {
				v.SetString(r)
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				s.walk(v.Field(i), seen)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			s.walk(v.Index(i), seen)
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		iter := v.MapRange()
		for iter.Next() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(iter.Value())
			before := e.Interface()
			s.walk(e, seen)
			if !reflect.DeepEqual(before, e.Interface()) {
				v.SetMapIndex(iter.Key(), e)
			}
		}
	}
}
