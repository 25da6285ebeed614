# expect: parse-error line=3
def plan():
	walk(b'kitchen')
