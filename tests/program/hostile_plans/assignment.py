# expect: parse-error line=3
def plan():
	room = 'kitchen'
	walk(room)
