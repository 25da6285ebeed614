# expect: parse-error line=5
def plan():
	walk('kitchen')

def other():
	grab('lime')
