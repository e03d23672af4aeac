package shell

import (
	"bytes"
	"fmt"
)

// cat: concatenate files (or stdin for "-" or no operand); -n numbers
// every output line as GNU cat does ("%6d\t").

func init() { register("cat", cmdCat) }

func cmdCat(c *call) int {
	o, ok := c.parse(optSpec{flags: "n", long: map[string]bool{"number": false}, alias: map[string]string{"number": "n"}})
	if !ok {
		return 1
	}
	number := o.has("n")
	args := o.operands
	if len(args) == 0 {
		args = []string{"-"}
	}
	status := 0
	line := 1
	atStart := true
	for _, a := range args {
		data, err := c.readFile(a)
		if err != nil {
			c.pathErr("%s: ", a, err)
			status = 1
			continue
		}
		if !number {
			c.out.Write(data)
			continue
		}
		for len(data) > 0 {
			if atStart {
				fmt.Fprintf(c.out, "%6d\t", line)
				line++
			}
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				c.out.Write(data)
				atStart = false
				break
			}
			c.out.Write(data[:i+1])
			data = data[i+1:]
			atStart = true
		}
	}
	return status
}
