# expect: invalid line=3
def plan():
	standup('kitchen')
