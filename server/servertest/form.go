package servertest

import (
	"fmt"
	"io"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// form is an HTML form as a browser sees it: where it posts, its fields and
// its submit buttons.
type form struct {
	Action  string
	Method  string
	Fields  url.Values
	Buttons []button
}

type button struct{ ID, Name, Value string }

// parseForms reads every form of an HTML page.
func parseForms(r io.Reader) ([]form, string, error) {
	doc, err := html.Parse(r)
	if err != nil {
		return nil, "", fmt.Errorf("parsing page: %w", err)
	}
	var forms []form
	var text strings.Builder
	var cur *form
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			text.WriteString(n.Data)
		}
		if n.Type == html.ElementNode {
			switch n.Data {
			case "form":
				forms = append(forms, form{Action: attr(n, "action"), Method: strings.ToUpper(attr(n, "method")), Fields: url.Values{}})
				cur = &forms[len(forms)-1]
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c)
				}
				cur = nil
				return
			case "input":
				if cur != nil && attr(n, "name") != "" && attr(n, "type") != "submit" {
					cur.Fields.Set(attr(n, "name"), attr(n, "value"))
				}
			case "button":
				if cur != nil {
					cur.Buttons = append(cur.Buttons, button{ID: attr(n, "id"), Name: attr(n, "name"), Value: attr(n, "value")})
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return forms, text.String(), nil
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// elementText returns the text of the element with the given id.
func elementText(r io.Reader, id string) (string, error) {
	doc, err := html.Parse(r)
	if err != nil {
		return "", err
	}
	var found *html.Node
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if found != nil {
			return
		}
		if n.Type == html.ElementNode && attr(n, "id") == id {
			found = n
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if found == nil {
		return "", fmt.Errorf("no element with id %q", id)
	}
	var b strings.Builder
	for c := found.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return strings.TrimSpace(b.String()), nil
}

// submit returns the body to post for form f pressed with the button whose
// value is action (or the first button when action is "").
func (f form) submit(action string) (url.Values, error) {
	vals := url.Values{}
	for k, v := range f.Fields {
		vals[k] = append([]string(nil), v...)
	}
	for _, b := range f.Buttons {
		if action == "" || b.Value == action {
			if b.Name != "" {
				vals.Set(b.Name, b.Value)
			}
			return vals, nil
		}
	}
	return nil, fmt.Errorf("form has no button %q", action)
}
