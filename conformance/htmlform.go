package conformance

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// htmlForm is a <form> as a browser would submit it.
type htmlForm struct {
	Action  *url.URL
	Method  string     // GET or POST
	Fields  url.Values // successful controls: inputs with a name, checked boxes, textareas, selects
	Inputs  map[string]bool
	Buttons []formButton // named submit buttons, in document order
}

type formButton struct{ Name, Value string }

// hasInput reports whether the form has a control named name.
func (f *htmlForm) hasInput(name string) bool { return f.Inputs[name] }

// button returns the submit button whose value is value.
func (f *htmlForm) button(value string) (formButton, bool) {
	for _, b := range f.Buttons {
		if b.Value == value {
			return b, true
		}
	}
	return formButton{}, false
}

// submission returns the values to send when the form is submitted with
// button b (zero: no named button) and set overriding fields.
func (f *htmlForm) submission(b formButton, set map[string]string) url.Values {
	v := url.Values{}
	for k, vs := range f.Fields {
		v[k] = append([]string(nil), vs...)
	}
	for k, x := range set {
		v.Set(k, x)
	}
	if b.Name != "" {
		v.Set(b.Name, b.Value)
	}
	return v
}

// parseForms returns the forms of an HTML page; page is the URL it came from.
func parseForms(page *url.URL, body []byte) ([]*htmlForm, *html.Node, error) {
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return nil, nil, fmt.Errorf("parsing HTML: %w", err)
	}
	var forms []*htmlForm
	var walk func(n *html.Node, f *htmlForm)
	walk = func(n *html.Node, f *htmlForm) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "form":
				f = &htmlForm{Method: "GET", Action: page, Fields: url.Values{}, Inputs: map[string]bool{}}
				if m := strings.ToUpper(attr(n, "method")); m == "POST" {
					f.Method = m
				}
				if a, ok := attrOK(n, "action"); ok && a != "" {
					if u, err := page.Parse(a); err == nil {
						f.Action = u
					}
				}
				forms = append(forms, f)
			case "input":
				if f != nil {
					addInput(f, n)
				}
			case "button":
				if f != nil {
					if t := strings.ToLower(attr(n, "type")); (t == "" || t == "submit") && attr(n, "name") != "" {
						f.Buttons = append(f.Buttons, formButton{Name: attr(n, "name"), Value: attr(n, "value")})
					}
				}
			case "textarea":
				if f != nil && attr(n, "name") != "" {
					f.Inputs[attr(n, "name")] = true
					f.Fields.Add(attr(n, "name"), textContent(n))
				}
			case "select":
				if f != nil && attr(n, "name") != "" {
					f.Inputs[attr(n, "name")] = true
					f.Fields.Add(attr(n, "name"), selectedOption(n))
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, f)
		}
	}
	walk(doc, nil)
	return forms, doc, nil
}

func addInput(f *htmlForm, n *html.Node) {
	name := attr(n, "name")
	if name == "" {
		return
	}
	f.Inputs[name] = true
	switch strings.ToLower(attr(n, "type")) {
	case "submit", "image":
		f.Buttons = append(f.Buttons, formButton{Name: name, Value: attr(n, "value")})
	case "button", "reset", "file":
	case "checkbox", "radio":
		if _, checked := attrOK(n, "checked"); checked {
			v, ok := attrOK(n, "value")
			if !ok {
				v = "on"
			}
			f.Fields.Add(name, v)
		}
	default:
		f.Fields.Add(name, attr(n, "value"))
	}
}

func selectedOption(sel *html.Node) string {
	first, found := "", false
	var walk func(n *html.Node) (string, bool)
	walk = func(n *html.Node) (string, bool) {
		if n.Type == html.ElementNode && n.Data == "option" {
			v, ok := attrOK(n, "value")
			if !ok {
				v = strings.TrimSpace(textContent(n))
			}
			if !found {
				first, found = v, true
			}
			if _, sel := attrOK(n, "selected"); sel {
				return v, true
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if v, ok := walk(c); ok {
				return v, true
			}
		}
		return "", false
	}
	if v, ok := walk(sel); ok {
		return v
	}
	return first
}

func attr(n *html.Node, key string) string {
	v, _ := attrOK(n, key)
	return v
}

func attrOK(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, key) {
			return a.Val, true
		}
	}
	return "", false
}

func textContent(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// findAPIKey finds the API key on a Settings page: the element with
// id="api-key" (its text, or its value if it is an input), or else the first
// element with a data-api-key attribute.
func findAPIKey(doc *html.Node) string {
	var byID, byData string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			if byID == "" && attr(n, "id") == "api-key" {
				if n.Data == "input" {
					byID = attr(n, "value")
				} else {
					byID = strings.TrimSpace(textContent(n))
				}
			}
			if v, ok := attrOK(n, "data-api-key"); ok && byData == "" && v != "" {
				byData = v
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if byID != "" {
		return byID
	}
	return byData
}

// pageText is the visible text of a page, squeezed, for error messages.
func pageText(doc *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && (n.Data == "script" || n.Data == "style" || n.Data == "head") {
			return
		}
		if n.Type == html.TextNode {
			b.WriteString(n.Data + " ")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	s := strings.Join(strings.Fields(b.String()), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
