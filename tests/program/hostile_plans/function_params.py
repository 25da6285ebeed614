# expect: parse-error line=2
def plan(room='kitchen'):
	walk(room)
