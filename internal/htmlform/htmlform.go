// Package htmlform reads HTML pages as a browser without JavaScript does:
// each form with what submitting it would send, and the text a person would
// read. The conformance suite's form approver and the server's test browser
// both drive the service's pages with it.
package htmlform

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// Form is a <form> as a browser would submit it.
type Form struct {
	Action *url.URL
	Method string     // GET or POST
	Fields url.Values // successful controls: inputs with a name, checked boxes, textareas, selects
	Inputs map[string]bool
	// Types maps each input's name to its type attribute, lower case
	// ("text" when absent), so a driver can find the password field.
	Types   map[string]string
	Buttons []Button // submit buttons, in document order
}

// Button is a submit button; one without a name adds nothing to the form.
// Label is the text a person reads on it.
type Button struct{ Name, Value, Label string }

// HasInput reports whether the form has a control named name.
func (f *Form) HasInput(name string) bool { return f.Inputs[name] }

// Button returns the submit button whose value is value.
func (f *Form) Button(value string) (Button, bool) {
	for _, b := range f.Buttons {
		if b.Value == value {
			return b, true
		}
	}
	return Button{}, false
}

// Submission returns the values to send when the form is submitted with
// button b (zero: no named button) and set overriding fields.
func (f *Form) Submission(b Button, set map[string]string) url.Values {
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

// Page is a parsed HTML page.
type Page struct {
	Forms []*Form
	Links []Link // <a href>, in document order
	Doc   *html.Node
}

// Link is an <a href> resolved against the page, with the text a person
// reads on it.
type Link struct {
	URL   *url.URL
	Label string
}

// FormWith returns the first form with a submit button of the given value.
func (p *Page) FormWith(button string) (*Form, Button) {
	for _, f := range p.Forms {
		if b, ok := f.Button(button); ok {
			return f, b
		}
	}
	return nil, Button{}
}

// FormWithInput returns the first form with a control named name.
func (p *Page) FormWithInput(name string) *Form {
	for _, f := range p.Forms {
		if f.HasInput(name) {
			return f
		}
	}
	return nil
}

// Parse reads an HTML page; page is the URL it came from, against which form
// actions resolve.
func Parse(page *url.URL, body []byte) (*Page, error) {
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("parsing HTML: %w", err)
	}
	var forms []*Form
	var links []Link
	var walk func(n *html.Node, f *Form)
	walk = func(n *html.Node, f *Form) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "form":
				f = &Form{Method: "GET", Action: page, Fields: url.Values{}, Inputs: map[string]bool{}, Types: map[string]string{}}
				if m := strings.ToUpper(attr(n, "method")); m == "POST" {
					f.Method = m
				}
				if a, ok := attrOK(n, "action"); ok && a != "" {
					if u, err := page.Parse(a); err == nil {
						f.Action = u
					}
				}
				forms = append(forms, f)
			case "a":
				if u, err := page.Parse(attr(n, "href")); err == nil && attr(n, "href") != "" {
					links = append(links, Link{URL: u, Label: strings.TrimSpace(textContent(n))})
				}
			case "input":
				if f != nil {
					addInput(f, n)
				}
			case "button":
				if f != nil {
					if t := strings.ToLower(attr(n, "type")); t == "" || t == "submit" {
						f.Buttons = append(f.Buttons, Button{Name: attr(n, "name"), Value: attr(n, "value"), Label: strings.TrimSpace(textContent(n))})
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
	return &Page{Forms: forms, Links: links, Doc: doc}, nil
}

func addInput(f *Form, n *html.Node) {
	name := attr(n, "name")
	if name == "" {
		return
	}
	f.Inputs[name] = true
	typ := strings.ToLower(attr(n, "type"))
	if typ == "" {
		typ = "text"
	}
	f.Types[name] = typ
	switch typ {
	case "submit", "image":
		f.Buttons = append(f.Buttons, Button{Name: name, Value: attr(n, "value"), Label: attr(n, "value")})
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

// APIKey finds the API key on the service's Settings page: the element with
// id="api-key" (its text, or its value if it is an input), or else the first
// element with a data-api-key attribute; "" when there is none.
func (p *Page) APIKey() string {
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
	walk(p.Doc)
	if byID != "" {
		return byID
	}
	return byData
}

// Text is the visible text of the page, squeezed and cut at 200 bytes, for
// error messages.
func (p *Page) Text() string {
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
	walk(p.Doc)
	s := strings.Join(strings.Fields(b.String()), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
